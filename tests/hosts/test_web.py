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
from selenium.webdriver.common.action_chains import ActionChains
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
    # the shipped models left out: the page tests read the heuristic's moves and hints
    app = create_app(out, delay=0.0, pretrained=False)
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


def _click_card(driver, card) -> None:
    """A card of the hand, clicked where a person clicks it: its visible top strip (the
    cards of a column overlap)."""
    ActionChains(driver).move_to_element_with_offset(
        card, 0, -card.size["height"] // 2 + 6
    ).click().perform()


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
    browser.get(f"{base}/table/{table}?lang=en")
    _wait(browser, lambda d: d.execute_script("return document.body.dataset.yourTurn") == "true")
    # 1. the tribute return: a card is chosen from the hand, then confirmed
    assert browser.execute_script("return document.body.dataset.phase") == "return"
    browser.find_element(By.CSS_SELECTOR, "#legal-list summary").click()
    keep = ("H2", "H3", "H4", "H5", "H6")  # for the wildcard lead below
    returns = browser.find_elements(By.CSS_SELECTOR, "#legal li")
    assert returns and all(li.text.startswith("return") for li in returns)
    card = lambda li: li.find_element(By.CSS_SELECTOR, ".card").get_attribute("data-card")  # noqa: E731
    next(li for li in returns if card(li) not in keep).click()
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
        _click_card(browser, browser.find_element(By.CSS_SELECTOR, f'#hand .card[data-card="{c}"]'))
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
    browser.get(f"{base}/table/{table}?lang=en")
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
        _click_card(browser, browser.find_elements(By.CSS_SELECTOR, "#hand .card")[i])
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
    browser.get(f"{base}/replays?name={names[0]}&lang=en")
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
    """The page's own requests (same origin, JSON) pass the guard; agents come from its list;
    one click seats you with a partner against two agents (the strongest offered: here the
    heuristic) and the choice is remembered."""
    base, _ = server
    browser.get(base + "/?lang=en")
    browser.execute_script("localStorage.removeItem('guandan.choice')")
    browser.refresh()
    _wait(browser, lambda d: d.execute_script("return document.body.dataset.agents") == "2")
    partner = browser.find_elements(By.CSS_SELECTOR, "select[name=partner] option")
    assert [o.get_attribute("value") for o in partner] == ["heuristic", "random"]
    assert [o.get_attribute("textContent") for o in partner] == ["heuristic", "random"]
    assert "heuristic partner" in browser.find_element(By.ID, "quick").text
    browser.find_element(By.ID, "quick").click()
    _wait(browser, lambda d: "/table/" in d.current_url)
    table = browser.current_url.rsplit("/", 1)[1]
    t = LIVE["hub"].registry.tables[table]
    assert t.seats == ["human", "heuristic", "heuristic", "heuristic"]
    _wait(browser, lambda d: d.execute_script("return document.body.dataset.version") is not None)
    saved = json.loads(browser.execute_script("return localStorage.getItem('guandan.choice')"))
    assert saved == {"seat": "0", "partner": "heuristic", "opponents": "heuristic", "mode": "deal"}
    # a remembered choice comes back: random opponents through the form, then one click
    browser.get(base + "/")
    _wait(browser, lambda d: d.execute_script("return document.body.dataset.agents") == "2")
    browser.find_element(By.CSS_SELECTOR, "#more summary").click()
    browser.find_element(By.CSS_SELECTOR, "select[name=opponents] option[value=random]").click()
    browser.find_element(By.ID, "start").click()
    _wait(browser, lambda d: "/table/" in d.current_url)
    browser.get(base + "/")
    _wait(browser, lambda d: d.execute_script("return document.body.dataset.agents") == "2")
    value = "return document.querySelector('select[name=opponents]').value"
    assert browser.execute_script(value) == "random"
    assert "random opponents" in browser.find_element(By.ID, "quick").text


def test_a_replay_file_uploads_from_the_page(server, browser):
    base, out = server
    path = sorted((out / "replays").glob("*.json"))[0]
    browser.get(base + "/replays?lang=en")
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


# ------------------------------------------------------------------ the table as players see it
# what may stay ASCII in Chinese mode: card ranks (and their repeats in a declaration: QQ,
# JJJ), numbers, and the key caps named in the key help and on buttons
ASCII_ALLOWED = {"J", "Q", "K", "A", "P", "H", "C", "Esc", "Enter"}
VISIBLE_TEXT = """
const out = [];
const w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
while (w.nextNode()) {
  const p = w.currentNode.parentElement;
  // a <select>'s options are agent names and replay file names (data), not labels
  if (!p || p.closest("select, script, style") || !p.checkVisibility()) continue;
  out.push(w.currentNode.textContent);
}
return out.join(" ");
"""


def _english_left(driver) -> list[str]:
    import re

    words = re.findall(r"[A-Za-z]+", driver.execute_script(VISIBLE_TEXT))
    return sorted({w for w in words if w not in ASCII_ALLOWED and not re.fullmatch(r"[JQKA]+", w)})


def _public_unseen(table, seat: int) -> dict[str, int]:
    """Per rank, the copies ``seat`` has not seen, from the engine's public record: the deck
    less the seat's hand and every card played this deal (``env.events``, R-8.1)."""
    from experiments.hosts.web.words import rank
    from guandan_env.core.cards import FACE_RANK
    from guandan_env.encoding.events import DealStarted, Played

    env = table.env.unwrapped
    start = max(i for i, e in enumerate(env.events) if isinstance(e, DealStarted))
    left = np.full(54, 2) - env.game.hands[seat]
    for e in env.events[start:]:
        if isinstance(e, Played):
            for f in e.faces:
                left[f] -= 1
    out: dict[str, int] = {}
    for f in range(54):
        out[rank(int(FACE_RANK[f]))] = out.get(rank(int(FACE_RANK[f])), 0) + int(left[f])
    return out


def _view_with_hidden_cards_redealt(table, seat: int, rng) -> dict:
    """``table.view(seat)`` after the other seats' hands are dealt again among themselves
    (each keeps its number of cards); the engine's state is restored afterwards."""
    g = table.game
    others = [s for s in range(4) if s != seat]
    saved = g.hands.copy()
    pool = np.concatenate([np.repeat(np.arange(54), g.hands[s]) for s in others])
    pool = rng.permutation(pool)
    k = 0
    for s in others:
        n = int(saved[s].sum())
        g.hands[s] = np.bincount(pool[k : k + n], minlength=54)
        k += n
    try:
        return table.view(seat)
    finally:
        g.hands[:] = saved


def _tracker_on_page(driver) -> dict[str, int]:
    cells = driver.find_elements(By.CSS_SELECTOR, "#tracker .tcell")
    return {
        c.get_attribute("data-rank"): int(c.find_element(By.CSS_SELECTOR, ".tleft").text)
        for c in cells
    }


def _play_with_hints(browser, base, table, check) -> int:
    """Play a deal from the page: at each of the human's decisions ``check(hint)`` runs, then
    the hint is played (its highlighted choice, or pass). Returns the hints asked for."""
    asked = 0
    for _ in range(300):
        phase = browser.execute_script("return document.body.dataset.phase")
        if phase in ("result", "over"):
            return asked
        if browser.execute_script("return document.body.dataset.yourTurn") != "true":
            time.sleep(0.05)
            continue
        version = _version(browser)
        browser.find_element(By.ID, "hint").click()
        _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#hint-text .hint-play"))
        asked += 1
        hint = next(f for f in reversed(_frames(browser)) if f.get("type") == "hint")
        assert hint["version"] == version
        check(hint)
        if hint["action"] == 0:
            _click_and_wait(browser, browser.find_element(By.ID, "pass"))
        else:
            button = browser.find_element(By.CSS_SELECTOR, "#choices .choice.hinted")
            assert int(button.get_attribute("data-action")) == hint["action"]
            _click_and_wait(browser, button)
    raise AssertionError("the deal did not end")


def test_the_tracker_counts_only_what_the_seat_may_know(server, browser):
    """At every decision of a whole deal the page's tracker equals the count from the
    engine's public record, the other hands' cards in total, and does not change when the
    hidden cards are dealt again among the other seats (a leaked card would change it)."""
    from agents.heuristic import HeuristicAgent

    base, _ = server
    hub = LIVE["hub"]
    table_id = _new_table(
        base,
        {
            "seats": ["human", "heuristic", "heuristic", "heuristic"],
            "seed": 21,
            "random_tribute": True,
        },
    )
    table = hub.registry.get(table_id)
    browser.get_log("performance")
    browser.get(f"{base}/table/{table_id}?lang=en")
    rng = np.random.default_rng(0)
    checked = []

    def check(hint):
        shown = _tracker_on_page(browser)
        want = _public_unseen(table, 0)
        assert shown == want
        others = sum(table.game.hands[s] for s in (1, 2, 3))
        assert sum(shown.values()) == int(others.sum())
        view = table.view(0)
        assert _view_with_hidden_cards_redealt(table, 0, rng)["tracker"] == view["tracker"]
        assert view["tracker"]["wild"] == int(
            2 - table.game.hands[0][table.game.level * 4 + 1]
        ) - sum(f == table.game.level * 4 + 1 for _, _, fs in table.game.history for f in fs)
        # the hint: legal, and the agent's own choice for the same state
        env = table.env.unwrapped
        assert env.action_mask()[hint["action"]]
        from experiments.evaluation.duplicate import LazyObservation

        own = HeuristicAgent(seed=0).act(LazyObservation(env, "player_0"), env.infos["player_0"])
        assert hint["action"] == own and hint["prob"] is None
        assert "rule-based choice" in browser.find_element(By.ID, "hint-text").text
        checked.append(hint["action"])

    _wait(browser, lambda d: d.execute_script("return document.body.dataset.yourTurn") == "true")
    asked = _play_with_hints(browser, base, table_id, check)
    assert asked == len(checked) >= 5
    for f in _frames(browser):  # no state the page received counted a hidden card either
        if f.get("type") == "state" and f.get("tracker"):
            assert sum(r["left"] for r in f["tracker"]["ranks"]) == f["tracker"]["total"]
    LIVE["hinted"] = (table_id, asked)


def test_hints_are_recorded_in_the_results_file(server, browser):
    _, out = server
    table_id, asked = LIVE["hinted"]
    rows = [json.loads(x) for x in (out / "human_results.jsonl").read_text().splitlines()]
    row = next(r for r in rows if r["table"] == table_id)
    assert row["hints"] == asked == len(row["hint_log"]) and row["hints_followed"] == asked
    assert all(h["agent"] == "heuristic" for h in row["hint_log"])


def test_the_review_steps_through_a_finished_deal(server, browser):
    """One row per decision of the human (replay actions of seat 0), forward and back, the
    replay frame following; with the heuristic every disagreement is marked."""
    base, out = server
    table_id, _ = LIVE["hinted"]
    name = f"web_{table_id}.json"
    data = json.loads((out / "replays" / name).read_text())
    from guandan_env.envs.replay import Replay, replay_steps

    human_steps = [s.index for s in replay_steps(Replay.from_dict(data)) if s.seat == 0]
    browser.get(f"{base}/replays?name={name}&lang=en")
    _wait(browser, lambda d: d.find_element(By.ID, "review").is_displayed())
    browser.find_element(By.ID, "review-run").click()
    rows = lambda d: d.find_elements(By.CSS_SELECTOR, "#review-table tbody tr")  # noqa: E731
    _wait(browser, lambda d: len(rows(d)) > 0)
    assert [int(r.get_attribute("data-index")) for r in rows(browser)] == human_steps
    # every hint was played: the agent agrees everywhere, nothing is marked
    assert not browser.find_elements(By.CSS_SELECTOR, "#review-table tr.marked")
    pos = lambda d: int(d.execute_script("return document.body.dataset.reviewPos"))  # noqa: E731
    step = lambda d: d.find_element(By.ID, "rp-pos").text  # noqa: E731
    assert pos(browser) == 0 and step(browser).startswith(f"step {human_steps[0]} /")
    browser.find_element(By.ID, "rv-next").click()
    browser.find_element(By.ID, "rv-next").click()
    assert pos(browser) == 2 and step(browser).startswith(f"step {human_steps[2]} /")
    browser.find_element(By.ID, "rv-prev").click()
    assert pos(browser) == 1 and step(browser).startswith(f"step {human_steps[1]} /")
    current = browser.find_element(By.CSS_SELECTOR, "#review-table tr.current")
    assert int(current.get_attribute("data-index")) == human_steps[1]


def test_the_review_marks_where_the_human_differs(server, browser):
    """A deal played by "the first legal play" against the heuristic's advice: the rows where
    they differ are marked, the others not (the review of an old replay: built from it)."""
    from agents.heuristic import HeuristicAgent
    from guandan_env.envs.replay import record_game

    class FirstLegal:  # a "human" who always makes the first legal play
        name = "human"

        def reset(self, seed=None):
            pass

        def act(self, observation, info):
            return int(np.flatnonzero(observation["action_mask"])[0])

    base, out = server
    agents = [FirstLegal()] + [HeuristicAgent(seed=s) for s in (1, 2, 3)]
    replay = record_game(agents, seed=11, config={"random_tribute": True})
    name = "first_legal_vs_heuristic.json"
    (out / "replays").mkdir(parents=True, exist_ok=True)
    (out / "replays" / name).write_text(replay.to_json(indent=1) + "\n", encoding="utf-8")
    assert replay.meta["agents"][0] == "human"
    browser.get(f"{base}/replays?name={name}&lang=en")
    _wait(browser, lambda d: d.find_element(By.ID, "review").is_displayed())
    browser.find_element(By.ID, "review-run").click()
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#review-table tbody tr"))
    rows = browser.find_elements(By.CSS_SELECTOR, "#review-table tbody tr")
    marked = [r for r in rows if "marked" in r.get_attribute("class")]
    same = [r for r in rows if r.find_elements(By.TAG_NAME, "td")[4].text == "same"]
    assert marked and len(marked) + len(same) == len(rows)


def test_the_language_switch_changes_every_label(server, browser):
    """In Chinese no English is left on the table (seats, tracker, hint, log), the result
    panel, and the replay and review pages; the switch on the page changes it back."""
    base, out = server
    table_id = _new_table(
        base,
        {
            "seats": ["human", "heuristic", "heuristic", "heuristic"],
            "seed": 4,
            "options": {"leader": 0},
        },
    )
    browser.get_log("performance")
    browser.get(f"{base}/table/{table_id}?lang=zh")
    _wait(browser, lambda d: d.execute_script("return document.body.dataset.yourTurn") == "true")
    browser.find_element(By.ID, "group").click()
    browser.find_element(By.CSS_SELECTOR, "#legal-list summary").click()
    seen = {"table": []}

    def check(hint):
        if not seen["table"]:
            seen["table"] = _english_left(browser)
            assert "记牌器" in browser.find_element(By.ID, "tracker").text
            assert "规则选择" in browser.find_element(By.ID, "hint-text").text

    _play_with_hints(browser, base, table_id, check)
    _wait(browser, lambda d: d.find_element(By.ID, "result").is_displayed())
    assert seen["table"] == [], seen["table"]
    result = browser.find_element(By.ID, "result").text
    assert "名次" in result and any(p in result for p in ("头游", "二游", "三游", "末游"))
    assert _english_left(browser) == []
    # the post-deal review from the table, then the replay page with its review
    browser.find_element(By.ID, "review-link").click()
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#review-table tbody tr"))
    assert _english_left(browser) == []
    browser.get(f"{base}/replays?name=web_{table_id}.json")
    _wait(browser, lambda d: d.find_element(By.ID, "replay-view").is_displayed())
    browser.find_element(By.ID, "review-run").click()
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#review-table tbody tr"))
    browser.find_element(By.ID, "rp-last").click()
    assert _english_left(browser) == []
    # the switch: every label changes, and the choice is remembered
    zh = browser.execute_script(VISIBLE_TEXT)
    browser.find_element(By.CSS_SELECTOR, "#lang option[value=en]").click()
    _wait(browser, lambda d: d.execute_script("return document.body.dataset.lang") == "en")
    en = browser.execute_script(VISIBLE_TEXT)
    assert "Review" in en and "Forward" in en and "deal over" in en and "复盘" not in en
    assert zh != en
    browser.get(f"{base}/results")
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#results-table tbody tr"))
    assert "Human vs agents" in browser.find_element(By.CSS_SELECTOR, "#results h1").text
