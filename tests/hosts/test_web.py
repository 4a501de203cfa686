"""The web table in a real browser: headless Chromium (Debian's ``chromium`` and
``chromium-driver``, installed by ``.ci/run``) driven by Selenium against a live server.

A human plays a whole deal by clicking (a tribute return and a wildcard reading included),
a replay is stepped back and forth, a reload resumes, an illegal selection cannot be played,
and no WebSocket frame the page receives carries what RULES.md hides from its seat.
"""

from __future__ import annotations

import json
import shutil
import socket
import threading
import time

import numpy as np
import pytest
import uvicorn
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from experiments.hosts.web.app import create_app
from experiments.hosts.web.guard import server_config
from guandan_env.core.cards import face_text, full_deck, parse_card

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
DRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
LIVE: dict = {}  # the running server's hub, for tests that check nothing changed


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    out = tmp_path_factory.mktemp("web")
    port = _free_port()
    app = create_app(out, delay=0.0)
    LIVE["hub"] = app.state.hub
    srv = uvicorn.Server(server_config(app, "127.0.0.1", port))
    t = threading.Thread(target=srv.run, daemon=True)
    t.start()
    deadline = time.time() + 20
    while not srv.started:
        if time.time() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}", out
    srv.should_exit = True
    t.join(10)


@pytest.fixture(scope="module")
def browser():
    opts = Options()
    opts.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--window-size=1280,1000",
    ):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    driver = webdriver.Chrome(service=Service(DRIVER), options=opts)
    yield driver
    driver.quit()


def _new_table(base: str, body: dict) -> str:
    import urllib.request

    req = urllib.request.Request(
        base + "/api/tables",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())["table"]


def _lesson_deal(seed: int = 3) -> list[str]:
    """A deal at level 2 in which seat 0 holds H2 (the wildcard) with H3 H4 H5 H6 and one
    copy of H2, and seat 2 (last place) does not hold both big jokers."""
    rng = np.random.default_rng(seed)
    deck = rng.permutation(full_deck())
    hands = [sorted(deck[27 * s : 27 * s + 27].tolist()) for s in range(4)]
    want = [parse_card(c) for c in ("H2", "H3", "H4", "H5", "H6")]
    for f in want:
        if f in hands[0]:
            continue
        owner = next(s for s in (1, 2, 3) if f in hands[s])
        give = next(g for g in hands[0] if g not in want)
        hands[owner].remove(f)
        hands[owner].append(give)
        hands[0].remove(give)
        hands[0].append(f)
    while hands[0].count(parse_card("H2")) > 1:  # keep one wildcard: one reading set
        h2 = parse_card("H2")
        g = next(x for x in hands[1] if x not in want)
        hands[0].remove(h2)
        hands[1].remove(g)
        hands[0].append(g)
        hands[1].append(h2)
    rj = parse_card("RJ")
    if hands[2].count(rj) == 2:  # no resistance
        g = next(x for x in hands[1] if x != rj)
        hands[2].remove(rj)
        hands[1].remove(g)
        hands[2].append(g)
        hands[1].append(rj)
    return [" ".join(face_text(f) for f in h) for h in hands]


def _wait(driver, cond, timeout=20):
    return WebDriverWait(driver, timeout).until(lambda d: cond(d))


def _version(driver) -> int:
    return int(driver.execute_script("return document.body.dataset.version || -1"))


def _frames(driver) -> list[dict]:
    out = []
    for entry in driver.get_log("performance"):
        msg = json.loads(entry["message"])["message"]
        if msg.get("method") == "Network.webSocketFrameReceived":
            out.append(json.loads(msg["params"]["response"]["payloadData"]))
    return out


def _click_and_wait(driver, element) -> None:
    before = _version(driver)
    element.click()
    _wait(
        driver,
        lambda d: (
            _version(d) != before
            or d.execute_script("return document.body.dataset.phase") in ("result", "over")
        ),
    )


def test_a_human_plays_a_whole_deal_by_clicking(server, browser):
    base, out = server
    options = {
        "hands": _lesson_deal(),
        "levels": ["2", "2"],
        "leveling_team": 0,
        "previous_order": [0, 1, 3, 2],  # seat 2 last: it pays seat 0 tribute
        "leader": 0,
    }
    table = _new_table(
        base,
        {"seats": ["human", "heuristic", "heuristic", "heuristic"], "options": options, "seed": 1},
    )
    browser.get_log("performance")  # drop earlier frames
    browser.get(f"{base}/table/{table}")
    _wait(browser, lambda d: d.execute_script("return document.body.dataset.yourTurn") == "true")
    # 1. the tribute return: a card is chosen from the hand, then confirmed
    assert browser.execute_script("return document.body.dataset.phase") == "return"
    browser.find_element(By.CSS_SELECTOR, "#legal-list summary").click()
    keep = ("H2", "H3", "H4", "H5", "H6")  # for the wildcard lead below
    returns = browser.find_elements(By.CSS_SELECTOR, "#legal li")
    assert returns and all(li.text.startswith("return") for li in returns)
    next(li for li in returns if not any(k in li.text for k in keep)).click()
    choice = browser.find_element(By.CSS_SELECTOR, "#choices .choice")
    assert choice.text.startswith("1. return")
    _click_and_wait(browser, choice)
    # 2. a lead with the wildcard: H2 H3 H4 H5 H6 reads as a straight or a straight flush
    _wait(
        browser,
        lambda d: (
            d.execute_script("return document.body.dataset.yourTurn") == "true"
            and d.execute_script("return document.body.dataset.phase") == "play"
        ),
    )
    for c in ("H2", "H3", "H4", "H5", "H6"):
        browser.find_element(By.CSS_SELECTOR, f'#hand .card[data-card="{c}"]').click()
    texts = [b.text for b in browser.find_elements(By.CSS_SELECTOR, "#choices .choice")]
    assert any("straight flush" in t for t in texts) and any(
        "straight " in t.replace("straight flush", "") for t in texts
    ), texts
    sf = next(
        b
        for b in browser.find_elements(By.CSS_SELECTOR, "#choices .choice")
        if "straight flush" in b.text
    )
    _click_and_wait(browser, sf)
    # 3. play the deal out: pass when possible, else the first legal play
    for _ in range(200):
        phase = browser.execute_script("return document.body.dataset.phase")
        if phase in ("result", "over"):
            break
        if browser.execute_script("return document.body.dataset.yourTurn") != "true":
            time.sleep(0.05)
            continue
        pass_btn = browser.find_element(By.ID, "pass")
        if pass_btn.is_enabled():
            _click_and_wait(browser, pass_btn)
            continue
        browser.find_element(By.CSS_SELECTOR, "#legal li").click()  # the list stays open
        _click_and_wait(browser, browser.find_element(By.CSS_SELECTOR, "#choices .choice"))
    result = browser.find_element(By.ID, "result")
    _wait(browser, lambda d: result.is_displayed())
    assert " win" in result.text and "Finishing order" in result.text
    # 4. nothing hidden ever reached the page: no other hand, no foreign return card
    frames = [f for f in _frames(browser) if f.get("type") == "state"]
    assert len(frames) > 20
    for f in frames:
        assert f["viewer"] == 0
        assert all(s["hand"] is None for s in f["seats"])
        for e in f["log"]:
            if e["kind"] == "return" and 0 not in (e["seat"], e["return_to"]):
                assert e["cards"] == []
    assert (out / "human_results.jsonl").exists()
    assert list((out / "replays").glob(f"web_{table}.json"))


def _open_leading_table(browser, base: str, seed: int) -> str:
    """A single deal against heuristics in which the human (seat 0) leads; waits for its turn."""
    body = {"seats": ["human", "heuristic", "heuristic", "heuristic"], "seed": seed}
    table = _new_table(base, {**body, "options": {"leader": 0}})
    browser.get(f"{base}/table/{table}")
    _wait(browser, lambda d: d.execute_script("return document.body.dataset.yourTurn") == "true")
    return table


def test_an_illegal_selection_cannot_be_played(server, browser):
    base, _ = server
    _open_leading_table(browser, base, seed=7)
    cards = [
        (c.get_attribute("data-card"), "wild" in c.get_attribute("class"))
        for c in browser.find_elements(By.CSS_SELECTOR, "#hand .card")
    ]
    # two natural cards of different ranks, no wildcard or joker: never a combination
    plain = [i for i, (t, w) in enumerate(cards) if not w and t not in ("BJ", "RJ")]
    a = plain[0]
    b = next(i for i in plain if cards[i][0][1] != cards[a][0][1])
    for i in (a, b):  # every click re-renders the hand: find the card again
        browser.find_elements(By.CSS_SELECTOR, "#hand .card")[i].click()
    assert not browser.find_elements(By.CSS_SELECTOR, "#choices .choice")
    assert "no legal play" in browser.find_element(By.ID, "choices").text
    version = _version(browser)
    browser.find_element(By.TAG_NAME, "body").send_keys("\n")  # Enter does nothing either
    time.sleep(0.3)
    assert _version(browser) == version


def test_a_reload_resumes_the_game(server, browser):
    base, _ = server
    _open_leading_table(browser, base, seed=11)
    browser.find_element(By.CSS_SELECTOR, "#legal-list summary").click()
    browser.find_element(By.CSS_SELECTOR, "#legal li").click()
    _click_and_wait(browser, browser.find_element(By.CSS_SELECTOR, "#choices .choice"))
    _wait(browser, lambda d: d.execute_script("return document.body.dataset.yourTurn") == "true")
    hand = [
        c.get_attribute("data-card") for c in browser.find_elements(By.CSS_SELECTOR, "#hand .card")
    ]
    version = _version(browser)
    browser.refresh()
    _wait(browser, lambda d: _version(d) == version)
    again = [
        c.get_attribute("data-card") for c in browser.find_elements(By.CSS_SELECTOR, "#hand .card")
    ]
    assert again == hand and len(hand) < 27  # the same game, one play in


def test_a_replay_steps_back_and_forth(server, browser):
    base, out = server
    names = sorted(p.name for p in (out / "replays").glob("*.json"))
    assert names, "the first test saves a replay"
    browser.get(f"{base}/replays?name={names[0]}")
    _wait(browser, lambda d: d.find_element(By.ID, "replay-view").is_displayed())
    pos = browser.find_element(By.ID, "rp-pos")
    assert pos.text.startswith("step 0 /")
    for _ in range(3):
        browser.find_element(By.ID, "rp-next").click()
    assert pos.text.startswith("step 3 /")
    first_move = browser.find_element(By.CSS_SELECTOR, "#rp-frame .move").text
    browser.find_element(By.ID, "rp-prev").click()
    assert pos.text.startswith("step 2 /")
    browser.find_element(By.ID, "rp-next").click()
    assert browser.find_element(By.CSS_SELECTOR, "#rp-frame .move").text == first_move
    browser.find_element(By.ID, "rp-last").click()
    assert "deal over" in browser.find_element(By.ID, "rp-frame").text


# ------------------------------------------------------------------ the page and a hostile page
def test_the_lobby_starts_a_game_through_the_request_guard(server, browser):
    """The page's own requests (same origin, JSON) pass the guard; agents come from its list."""
    base, _ = server
    browser.get(base + "/")
    _wait(browser, lambda d: d.execute_script("return document.body.dataset.agents") == "2")
    options = [
        o.text for o in browser.find_elements(By.CSS_SELECTOR, "select[name=partner] option")
    ]
    assert options == ["heuristic", "random"]
    browser.find_element(By.ID, "start").click()
    _wait(browser, lambda d: "/table/" in d.current_url)
    table = browser.current_url.rsplit("/", 1)[1]
    assert table in LIVE["hub"].registry.tables
    _wait(browser, lambda d: d.execute_script("return document.body.dataset.version") is not None)


def test_a_replay_file_uploads_from_the_page(server, browser):
    base, out = server
    path = sorted((out / "replays").glob("*.json"))[0]
    browser.get(base + "/replays")
    browser.find_element(By.ID, "replay-file").send_keys(str(path))
    _wait(browser, lambda d: d.find_element(By.ID, "replay-view").is_displayed())
    assert browser.find_element(By.ID, "rp-pos").text.startswith("step 0 /")
    hands = browser.find_elements(By.CSS_SELECTOR, "#rp-frame .rp-hand")
    assert len(hands) == 4 and all(h.find_elements(By.CSS_SELECTOR, ".card") for h in hands)
    browser.find_element(By.ID, "rp-last").click()
    assert "deal over" in browser.find_element(By.ID, "rp-frame").text
    assert not browser.find_element(By.ID, "replay-error").text


EVIL_PAGE = """<!doctype html><html><body><script>
const target = "%s";
const out = [];
async function attack() {
  const body = JSON.stringify({seats: ["human", "heuristic", "heuristic", "heuristic"]});
  try { await fetch(target + "/api/tables", {method: "POST", mode: "no-cors", body,
                                             headers: {"Content-Type": "text/plain"}}); }
  catch (e) { out.push("fetch failed"); }
  try { await fetch(target + "/api/tables", {method: "POST", mode: "no-cors", body}); }
  catch (e) { out.push("fetch failed"); }
  const ws = new WebSocket(target.replace("http", "ws") + "/ws/%s");
  ws.onmessage = (ev) => out.push("ws message " + ev.data.slice(0, 40));
  ws.onclose = () => { out.push("ws closed"); document.title = "done"; };
}
attack();
</script></body></html>"""


def test_a_foreign_page_can_neither_create_tables_nor_attach(server, browser, tmp_path):
    """Any site open in the user's browser: a no-cors POST (no preflight) and a WebSocket
    to a table whose id it knows. Nothing is created, nobody attaches, no frame arrives."""
    import http.server

    base, _ = server
    hub = LIVE["hub"]
    victim = _new_table(base, {"seats": ["human", "heuristic", "heuristic", "heuristic"]})
    before = set(hub.registry.tables)
    (tmp_path / "index.html").write_text(EVIL_PAGE % (base, victim))

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    evil = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), lambda *a: Quiet(*a, directory=str(tmp_path))
    )
    threading.Thread(target=evil.serve_forever, daemon=True).start()
    try:
        browser.get(f"http://localhost:{evil.server_address[1]}/index.html")  # another origin
        _wait(browser, lambda d: d.title == "done")
        log = browser.execute_script("return out")
    finally:
        evil.shutdown()
    assert set(hub.registry.tables) == before, "a foreign page created a table"
    assert hub.registry.get(victim).attached == 0 and not hub.viewers.get(victim)
    assert not any(x.startswith("ws message") for x in log), log
