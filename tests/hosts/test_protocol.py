"""The competition protocol: our server, our client and scripted clients over real sockets."""

from __future__ import annotations

import json
import random
import threading
import time

import numpy as np
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from agents.registry import make_agent
from agents.remote import ProtocolMirror, play
from experiments.evaluation.duplicate import derive_seed, game_config, play_game
from experiments.hosts import serve
from guandan_env.core import actions as T
from guandan_env.core import movegen
from guandan_env.core.cards import full_deck
from guandan_env.core.choice import choose_cards
from guandan_env.encoding import protocol as P

DEAL_CFG = {"random_levels": True, "random_tribute": True}


# ------------------------------------------------------------------ the format itself
def test_cards_and_hand_text():
    assert P.card_text(52) == "SB" and P.card_text(53) == "HR" and P.card_text(8 * 4 + 1) == "HT"
    for f in range(54):
        assert P.parse_card(P.card_text(f)) == f
    for bad in ("BJ", "h5", "S10", "X5", "", 5, None, ["S5"]):
        with pytest.raises(ValueError, match="malformed protocol card"):
            P.parse_card(bad)
    hand = np.zeros(54, np.uint8)
    hand[[53, 0, 3, 1, 52]] = [1, 2, 1, 1, 1]
    assert P.hand_cards(hand) == ["S2", "S2", "H2", "D2", "SB", "HR"]


def test_labels_follow_the_platform():
    lv = 5  # level 7
    straight_a_low = next(
        a
        for a in range(T.NUM_ACTIONS)
        if T.KIND[a] == T.STRAIGHT and T.KEY[a] == 3 and T.WILDS[a] == 0
    )
    hand = np.zeros(54, np.uint8)
    hand[[12 * 4, 0 * 4 + 2, 1 * 4, 2 * 4 + 3, 3 * 4]] = 1  # A 2 3 4 5, mixed suits
    e = P.entry(straight_a_low, lv, choose_cards(hand, lv, straight_a_low))
    assert e == ["Straight", "A", ["SA", "C2", "S3", "D4", "S5"]]
    four = int(np.flatnonzero(T.KIND == T.FOUR_JOKERS)[0])
    assert P.entry(four, lv, [52, 52, 53, 53]) == ["Bomb", "JOKER", ["SB", "SB", "HR", "HR"]]
    assert P.entry(0, lv, []) == ["PASS", "PASS", "PASS"]
    # a full house with a wildcard in its pair: triple first, the wildcard fills the pair
    fh = next(
        a
        for a in range(T.NUM_ACTIONS)
        if T.KIND[a] == T.FULL_HOUSE and T.KEY[a] == 1 and T.PAIR_RANK[a] == 9 and T.WILDS[a] == 1
    )
    wild = lv * 4 + 1
    assert P.entry(fh, lv, [4, 5, 6, 9 * 4, wild]) == [
        "ThreeWithTwo",
        "3",
        ["S3", "H3", "C3", "SJ", "H7"],
    ]


@pytest.mark.parametrize("wild_share", [0.0, 1.0])
def test_action_list_round_trips_on_random_hands(wild_share):
    """Every entry reads back to its action id and cards; the engine's choice comes first;
    leading and following, at every level, with and without wildcards."""
    rng = np.random.default_rng(11 if wild_share else 12)
    checked = 0
    for i in range(14):
        level = i % 13
        deck = rng.permutation(full_deck())
        hand = np.bincount(deck[:27], minlength=54).astype(np.uint8)
        wild = level * 4 + 1
        if wild_share:
            hand[wild] = max(hand[wild], 1 + (i % 2))
        else:
            hand[wild] = 0
        table = (
            -1 if i % 2 == 0 else int(rng.choice(np.flatnonzero(movegen.lead_mask(hand, level))))
        )
        legal = (
            movegen.lead_mask(hand, level) if table < 0 else movegen.follow_mask(hand, level, table)
        )
        entries, owners = P.action_list(hand, level, legal)
        assert sorted(set(owners)) == np.flatnonzero(legal).tolist()
        if table >= 0:
            assert entries[0] == P.PASS_ENTRY
        seen = set()
        for e, a in zip(entries, owners, strict=True):
            b, faces = P.action_of_entry(e, level)
            assert b == a, (e, a, b, level)
            counts = np.bincount(np.asarray(faces, np.int64), minlength=54)
            assert (counts <= hand).all()
            if a not in seen:  # the first entry of an id is the engine's own card choice
                assert sorted(faces) == sorted(choose_cards(hand, level, a))
                seen.add(a)
            checked += 1
    assert checked > 500


def test_unreadable_plays_are_refused():
    with pytest.raises(ValueError, match="no combination"):
        P.action_of_entry(["Pair", "5", ["S5", "S6"]], 0)
    with pytest.raises(ValueError, match="unknown protocol play type"):
        P.action_of_entry(["Rocket", "5", ["S5"]], 0)
    with pytest.raises(ValueError, match="malformed"):
        P.action_of_entry("PASS", 0)


# ------------------------------------------------------------------ scripted clients
def _scripted(url: str, log: list, pick, stop: threading.Event | None = None) -> None:
    with connect(url) as ws:
        for raw in ws:
            m = json.loads(raw)
            log.append(m)
            if m["type"] == "act":
                reply = pick(m)
                if reply is None:  # go silent / away
                    if stop is not None:
                        return
                    continue
                ws.send(reply)
            if m.get("stage") == "gameResult":
                return


def _random_pick(seed: int):
    rng = random.Random(seed)
    return lambda m: json.dumps({"actIndex": rng.randint(0, m["indexRange"])})


def _serve(specs, clients, games, **kw):
    remote = [i for i, s in enumerate(specs) if s == "remote"]
    srv = serve.ProtocolServer(remote, port=0)
    logs = {p: [] for p in remote}
    threads = [
        threading.Thread(target=_scripted, args=(srv.url(p), logs[p], clients[p]), daemon=True)
        for p in remote
    ]
    for t in threads:
        t.start()
    try:
        srv.wait_for_clients(10)
        rows = serve.run_games(specs, srv, games, **kw)
    finally:
        for t in threads:
            t.join(20)
        srv.close()
    return rows, logs


def test_four_scripted_clients_play_a_full_match(tmp_path):
    specs = ["remote"] * 4
    clients = {p: _random_pick(p) for p in range(4)}
    rows, logs = _serve(
        specs, clients, 1, seed=5, mode="match", timeout=10, out=tmp_path, save_replays=True
    )
    rec = rows[0]["record"]
    assert rec["match_winner"] in (0, 1)  # played until a team passed A
    assert rows[0]["faults"] == []
    assert len(rec["deals"]) >= 2
    for p, log in logs.items():
        stages = [(m["type"], m["stage"]) for m in log]
        assert stages.count(("notify", "beginning")) == len(rec["deals"])
        assert stages.count(("notify", "episodeOver")) == len(rec["deals"])
        assert stages[-2:] == [("notify", "gameOver"), ("notify", "gameResult")]
        assert all(m["myPos"] == p for m in log if "myPos" in m)
        for m in log:
            if m["type"] == "act":
                assert m["indexRange"] == len(m["actionList"]) - 1
                if m["stage"] == "play" and m["greaterPos"] >= 0 and m["greaterPos"] != p:
                    assert m["actionList"][0] == P.PASS_ENTRY
            if (
                m["type"] == "notify" and m["stage"] == "back"
            ):  # a return is seen only by the two seats
                assert all(p in (r[0], r[1]) for r in m["result"])
    wins = logs[0][-1]["victoryNum"]
    assert wins == [int(rec["match_winner"] == p % 2) for p in range(4)]
    assert (tmp_path / "results.jsonl").exists() and (tmp_path / "summary.json").exists()
    assert (tmp_path / "replays" / "game_00000.json").exists()


ACT_KEYS = {
    "type",
    "stage",
    "handCards",
    "myPos",
    "selfRank",
    "oppoRank",
    "curRank",
    "publicInfo",
    "curPos",
    "curAction",
    "greaterPos",
    "greaterAction",
    "actionList",
    "indexRange",
}
NOTIFY_KEYS = {
    "beginning": {"type", "stage", "handCards", "myPos", "selfRank", "oppoRank", "curRank"},
    "tribute": {"type", "stage", "result"},
    "anti-tribute": {"type", "stage", "antiNums", "antiPos"},
    "back": {"type", "stage", "result"},
    "play": {"type", "stage", "curPos", "curAction", "greaterPos", "greaterAction"},
    "episodeOver": {"type", "stage", "order", "curRank", "restCards"},
    "gameOver": {"type", "stage", "curTimes", "settingTimes"},
    "gameResult": {"type", "stage", "victoryNum", "draws"},
}


def test_messages_hold_only_what_the_seat_may_see():
    """Every message to a seat has exactly the documented fields; the only cards it names
    are its own, plays made, tribute (public) and its own returns (R-8)."""
    clients = {0: _random_pick(0)}
    rows, logs = _serve(
        ["remote", "heuristic", "heuristic", "heuristic"],
        clients,
        6,
        seed=9,
        config=DEAL_CFG,
        timeout=10,
    )
    stages = set()
    for m in logs[0]:
        stages.add(m["stage"])
        if m["type"] == "act":
            assert set(m) == ACT_KEYS
            held = sorted(m["handCards"])
            for e in m["actionList"]:
                cards = [] if e == P.PASS_ENTRY else e[2]
                assert all(held.count(c) >= cards.count(c) for c in cards)
            assert [p["rest"] for p in m["publicInfo"]][0] == len(m["handCards"])
        else:
            assert set(m) == NOTIFY_KEYS[m["stage"]], m
        if m["type"] == "notify" and m["stage"] == "back":
            assert all(0 in r[:2] for r in m["result"])
    assert {"tribute", "play", "episodeOver"} <= stages


def test_our_client_plays_exactly_as_in_process():
    """The heuristic behind our client at a protocol table makes the same moves as in
    process: the mirror rebuilds its view, observation and mask faithfully."""
    srv = serve.ProtocolServer([0], port=0)
    seen_client, seen_server = [], []

    class Recorder:
        name = "heuristic-recorder"

        def __init__(self):
            self.inner = make_agent("heuristic", 0)

        def reset(self, seed=None):
            self.inner.reset(seed)

        def act(self, obs, info):
            seen_client.append((obs["observation"].copy(), obs["action_mask"].copy()))
            return self.inner.act(obs, info)

    out = {}
    t = threading.Thread(target=lambda: out.update(play(srv.url(0), Recorder(), quiet=True)))
    t.start()
    original = serve.RemoteSeat.act

    def recording_act(self, observation, info):
        seen_server.append(
            (np.asarray(observation["observation"]).copy(), observation["action_mask"].copy())
        )
        return original(self, observation, info)

    serve.RemoteSeat.act = recording_act
    try:
        srv.wait_for_clients(10)
        specs = ["remote", "heuristic", "heuristic", "heuristic"]
        rows = serve.run_games(specs, srv, 8, seed=3, config=DEAL_CFG, timeout=20)
    finally:
        serve.RemoteSeat.act = original
        t.join(20)
        srv.close()
    assert out["games"] == 8 and all(r["faults"] == [] for r in rows)
    assert any(r["record"]["deals"][0]["deal_level"] != 0 for r in rows)
    for i, r in enumerate(rows):
        seats = [make_agent("heuristic", derive_seed(3, i, p)) for p in range(4)]
        rec = play_game(
            seats, r["seed"], game_config("deal", **DEAL_CFG), agent_seed=derive_seed(r["seed"], 0)
        )
        assert rec["deals"] == r["record"]["deals"] and rec["steps"] == r["record"]["steps"]
    assert len(seen_client) == len(seen_server) > 50
    for (oc, mc), (os_, ms) in zip(seen_client, seen_server, strict=True):
        np.testing.assert_array_equal(oc, os_)
        np.testing.assert_array_equal(mc, ms)


# ------------------------------------------------------------------ faults
def test_bad_index_malformed_reply_timeout_and_disconnect_are_survived():
    calls = {"n": 0}

    def naughty(m):
        calls["n"] += 1
        k = calls["n"]
        if k == 1:
            return json.dumps({"actIndex": m["indexRange"] + 5})
        if k == 2:
            return "{not json"
        if k == 3:
            return json.dumps({"actIndex": True})
        if k == 4:
            return None  # silent: the server times out
        return json.dumps({"actIndex": 0})

    rows, logs = _serve(
        ["remote", "heuristic", "heuristic", "heuristic"],
        {0: naughty},
        1,
        seed=2,
        config=DEAL_CFG,
        timeout=0.5,
    )
    kinds = [f["kind"] for f in rows[0]["faults"]]
    assert kinds[:4] == ["bad_index", "malformed", "bad_index", "timeout"]
    assert rows[0]["record"]["deals"]  # the deal was played to its end


def test_a_disconnected_seat_is_played_by_the_fallback_and_can_come_back():
    srv = serve.ProtocolServer([0], port=0)
    state = {"acts": 0}

    def leave_early():
        with connect(srv.url(0)) as ws:
            for raw in ws:
                m = json.loads(raw)
                if m["type"] == "act":
                    state["acts"] += 1
                    return  # drop the connection mid-deal

    def come_back():
        with connect(srv.url(0)) as ws:
            state["second"] = True
            for raw in ws:
                m = json.loads(raw)
                if m["type"] == "act":
                    state["acts"] += 1
                    ws.send(json.dumps({"actIndex": 0}))
                if m.get("stage") == "gameResult":
                    return

    t1 = threading.Thread(target=leave_early, daemon=True)
    t1.start()
    srv.wait_for_clients(10)
    specs = ["remote", "heuristic", "heuristic", "heuristic"]
    result = {}

    def run():
        result["rows"] = serve.run_games(specs, srv, 3, seed=4, config=DEAL_CFG, timeout=2)

    runner = threading.Thread(target=run, daemon=True)
    runner.start()
    t1.join(20)
    t2 = threading.Thread(target=come_back, daemon=True)
    t2.start()
    runner.join(120)
    t2.join(20)
    srv.close()
    rows = result["rows"]
    faults = [f["kind"] for r in rows for f in r["faults"]]
    assert "disconnected" in faults or "timeout" in faults
    assert all(r["record"]["deals"] for r in rows)
    assert state.get("second") and state["acts"] > 1  # the seat was taken back


def test_server_refuses_unknown_paths_and_a_second_client():
    srv = serve.ProtocolServer([1], port=0)
    try:
        with connect(srv.url(1).replace("client1", "client2")) as ws:
            with pytest.raises(ConnectionClosed):
                ws.recv(timeout=5)
        with connect(srv.url(1)):
            srv.wait_for_clients(5)
            with connect(srv.url(1)) as second:
                with pytest.raises(ConnectionClosed) as e:
                    second.recv(timeout=5)
                assert "already" in str(e.value.rcvd.reason)
    finally:
        srv.close()


def test_server_binds_to_localhost_by_default():
    srv = serve.ProtocolServer([0], port=0)
    try:
        assert srv.host == "127.0.0.1"
    finally:
        srv.close()


def test_serve_cli_errors():
    with pytest.raises(SystemExit) as e:
        serve.main(["--seats", "remote,heuristic"])
    assert e.value.code == 2
    with pytest.raises(SystemExit) as e:
        serve.main(["--seats", "remote,nosuch,heuristic,heuristic"])
    assert e.value.code == 2


def test_mirror_refuses_inconsistent_messages():
    m = ProtocolMirror()
    with pytest.raises(ValueError, match="before the deal"):
        m.decision({"type": "act", "stage": "play", "handCards": [], "actionList": []})
    with pytest.raises(ValueError, match="more than two copies"):
        m.handle(
            {
                "type": "notify",
                "stage": "beginning",
                "myPos": 0,
                "handCards": ["S2"] * 3,
                "selfRank": "2",
                "oppoRank": "2",
                "curRank": "2",
            }
        )
    assert m.game is None


# ------------------------------------------------------------------ hostile clients (issue 26)
def test_a_nested_json_reply_is_a_malformed_fault_and_the_run_goes_on():
    """5,000 ``[`` (under the 64 KiB cap) raised RecursionError and ended the whole run."""
    calls = {"n": 0}

    def nested(m):
        calls["n"] += 1
        return "[" * 5000 if calls["n"] == 1 else json.dumps({"actIndex": 0})

    rows, _ = _serve(["remote", "heuristic", "heuristic", "heuristic"], {0: nested}, 2, seed=2)
    assert len(rows) == 2 and all(r["record"]["deals"] for r in rows)  # both games played
    first = rows[0]["faults"][0]
    assert first["kind"] == "malformed" and "RecursionError" in first["detail"]


def test_a_browser_origin_cannot_take_a_seat():
    """A page in the user's browser (any Origin) is refused before the handshake; the seat
    stays free and the real client then takes it."""
    from websockets.exceptions import InvalidStatus

    srv = serve.ProtocolServer([0], port=0)
    try:
        with pytest.raises(InvalidStatus) as e:
            connect(srv.url(0), origin="http://evil.example", open_timeout=5)
        assert e.value.response.status_code == 403
        assert srv.links[0].conn is None and not srv.links[0].connected.is_set()
        with connect(srv.url(0)):
            srv.wait_for_clients(5)
    finally:
        srv.close()


def test_with_tokens_a_seat_needs_its_own_secret():
    srv = serve.ProtocolServer([0, 1], port=0, tokens=True)
    try:
        assert "?token=" in srv.url(0) and srv.url(0) != srv.url(1).replace("client1", "client0")
        base = srv.url(0).split("?")[0]
        wrong = srv.url(1).replace("client1", "client0")  # seat 1's token on seat 0
        for url in (base, base + "?token=nope", wrong):
            with connect(url) as ws:
                with pytest.raises(ConnectionClosed) as e:
                    ws.recv(timeout=5)
                assert e.value.rcvd.code == 1008 and "token" in e.value.rcvd.reason
            assert srv.links[0].conn is None  # no seat taken
        with connect(srv.url(0)), connect(srv.url(1)):
            srv.wait_for_clients(5)
    finally:
        srv.close()


def test_a_silent_client_is_benched_after_a_few_timeouts():
    """The library answers pings, so a silent client never looks gone: after
    ``max_timeouts`` timeouts in a row the fallback plays the seat without waiting."""
    import time

    t0 = time.monotonic()
    rows, _ = _serve(
        ["remote", "heuristic", "heuristic", "heuristic"],
        {0: lambda m: None},
        1,
        seed=2,
        config=DEAL_CFG,
        timeout=0.4,
        max_timeouts=3,
    )
    kinds = [f["kind"] for f in rows[0]["faults"]]
    assert kinds.count("timeout") == 3 and kinds.count("benched") == 1, kinds
    assert rows[0]["record"]["deals"] and time.monotonic() - t0 < 10


def test_duplicate_with_remote_seats_needs_trusted_clients(capsys):
    """After game one every card is public and the same client replays the deal: refused
    unless the operator says the clients are trusted."""
    specs = ["remote", "heuristic", "heuristic", "heuristic"]
    with pytest.raises(ValueError, match="--trust-remote"):
        serve.run_games(specs, None, 2, duplicate=True)
    with pytest.raises(SystemExit) as e:
        serve.main(["--seats", ",".join(specs), "--duplicate", "--port", "0", "--wait", "1"])
    assert e.value.code == 2 and "--trust-remote" in capsys.readouterr().err
    rows, _ = _serve(
        specs, {0: _random_pick(1)}, 2, seed=3, duplicate=True, trust_remote=True, timeout=10
    )
    assert [r["swap"] for r in rows] == [0, 1] and rows[0]["seed"] == rows[1]["seed"]
    rows = serve.run_games(["heuristic"] * 4, None, 2, duplicate=True)  # no remote: as before
    assert len(rows) == 2


def test_a_long_unknown_path_is_refused_with_1008_not_1011():
    srv = serve.ProtocolServer([0, 1, 2, 3], port=0)
    try:
        url = srv.url(0).replace("/game/client0", "/game/" + "é" * 200)
        with connect(url) as ws:
            with pytest.raises(ConnectionClosed) as e:
                ws.recv(timeout=5)
        assert e.value.rcvd.code == 1008 and "no remote seat" in e.value.rcvd.reason
        assert len(e.value.rcvd.reason.encode()) <= 123
        assert all(link.conn is None for link in srv.links.values())
    finally:
        srv.close()


def test_serve_warns_on_a_non_loopback_host(capsys):
    from experiments.hosts.loopback import is_loopback

    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.2")
    argv = ["--seats", "remote,heuristic,heuristic,heuristic", "--port", "0", "--wait", "0.2"]
    assert serve.main([*argv, "--host", "0.0.0.0"]) == 2  # nobody came: TimeoutError
    assert "warning" in capsys.readouterr().err
    assert serve.main([*argv, "--host", "127.0.0.1"]) == 2
    assert "warning" not in capsys.readouterr().err


# ------------------------------------------------------------------ a hostile server
def _hostile_server(messages: list[str], got: list):
    """A protocol server that sends ``messages``, then records what the client answers."""
    from websockets.sync.server import serve as ws_serve

    def handler(conn):
        for m in messages:
            conn.send(m)
        try:
            for raw in conn:
                got.append(json.loads(raw))
        except ConnectionClosed:
            pass

    srv = ws_serve(handler, "127.0.0.1", 0)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, f"ws://127.0.0.1:{srv.socket.getsockname()[1]}/game/client0"


def test_our_client_skips_what_a_malicious_server_sends():
    junk = [
        "[" * 5000,
        "[1, 2]",
        '"text"',
        "{not json",
        json.dumps({"type": "notify", "stage": "beginning"}),  # keys missing
        json.dumps({"type": "notify", "stage": "play", "curPos": "x"}),
        json.dumps({"type": "act", "stage": "play"}),  # an act we cannot read: index 0
        json.dumps({"type": "notify", "stage": "gameResult", "victoryNum": [0, 0, 0, 0]}),
    ]
    got: list = []
    srv, url = _hostile_server(junk, got)
    try:
        out = play(url, make_agent("heuristic", 0), timeout=10, quiet=True)
    finally:
        srv.shutdown()
    assert out["result"]["stage"] == "gameResult" and out["decisions"] == 1
    assert got == [{"actIndex": 0}]


def test_our_client_leaves_with_a_clear_error_on_endless_garbage(capsys):
    from agents import remote

    srv, url = _hostile_server(["[1]"] * (remote.MAX_UNREADABLE + 5), [])
    try:
        for _ in range(2):  # leaving, the close waits CLOSE_TIMEOUT_S at most (was 10 s)
            t0 = time.monotonic()
            with pytest.raises(remote.ProtocolError, match="could not be read"):
                play(url, make_agent("heuristic", 0), timeout=10, quiet=True)
            assert time.monotonic() - t0 < remote.CLOSE_TIMEOUT_S + 4
        assert remote.main(["--url", url]) == 2
    finally:
        srv.shutdown()
    assert "could not be read" in capsys.readouterr().err
