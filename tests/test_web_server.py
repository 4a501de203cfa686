"""The web table's server without a browser: Starlette's test client over its routes."""

from __future__ import annotations

import json

import pytest
from starlette.testclient import TestClient

from experiments.web.app import create_app
from experiments.web.guard import LOCAL_HOSTS
from experiments.web.tables import WebTable


@pytest.fixture
def client(tmp_path):
    app = create_app(tmp_path, delay=0.0, hosts=[*LOCAL_HOSTS, "testserver"])  # TestClient's host
    return TestClient(app), tmp_path


def _table(c, **body):
    body.setdefault("seats", ["human", "heuristic", "heuristic", "heuristic"])
    r = c.post("/api/tables", json=body)
    assert r.status_code == 200, r.text
    return r.json()["table"]


def _play_out(ws, pick=lambda m: m["legal"][-1]["id"]) -> tuple[dict, list[dict]]:
    seen, last = [], -1
    while True:
        m = ws.receive_json()
        assert m["type"] != "error", m
        seen.append(m)
        if m["phase"] in ("result", "over"):
            return m, seen
        if m["your_turn"] and m["version"] != last:
            last = m["version"]
            ws.send_json({"type": "act", "action": pick(m), "version": m["version"]})


def test_a_deal_is_played_saved_and_summarised(client):
    c, out = client
    tid = _table(c, random_tribute=True, random_levels=True, seed=5)
    with c.websocket_connect(f"/ws/{tid}") as ws:
        final, seen = _play_out(ws)
    assert final["result"]["gain"] in (1, 2, 3)
    for m in seen:  # only the viewer's hand; returns between others hidden
        assert m["viewer"] == 0 and all(s["hand"] is None for s in m["seats"])
        for e in m["log"]:
            if e["kind"] == "return" and 0 not in (e["seat"], e["return_to"]):
                assert e["cards"] == [] and e["text"] == "return"
    rows = [json.loads(x) for x in (out / "human_results.jsonl").read_text().splitlines()]
    assert rows[0]["table"] == tid and rows[0]["deals"] == 1
    res = c.get("/api/results").json()["results"]
    assert res[0]["opponents"] == "heuristic" and res[0]["deals"] == 1
    names = c.get("/api/replays").json()["replays"]
    assert names == [f"web_{tid}.json"]
    frames = c.get("/api/replay", params={"name": names[0]}).json()["frames"]
    assert frames[-1]["result"]["order"] == final["result"]["order"]
    # the same file uploaded gives the same frames
    raw = (out / "replays" / names[0]).read_bytes()
    json_type = {"Content-Type": "application/json"}
    assert c.post("/api/replay", content=raw, headers=json_type).json()["frames"] == frames


def test_bad_input_changes_nothing(client):
    c, _ = client
    assert c.post("/api/tables", json={"seats": ["human"]}).status_code == 400
    r = c.post("/api/tables", json={"seats": ["human", "nosuch", "random", "random"]})
    assert r.status_code == 400 and "nosuch" in r.json()["error"]
    r = c.post("/api/tables", json={"seats": ["human"] * 4})
    assert r.status_code == 400 and "one human" in r.json()["error"]
    r = c.post(
        "/api/tables",
        json={"seats": ["human", "random", "random", "random"], "options": {"bogus": 1}},
    )
    assert r.status_code == 400
    tid = _table(c, seed=3, options={"leader": 0})
    with c.websocket_connect(f"/ws/{tid}") as ws:
        m = ws.receive_json()
        assert m["your_turn"]
        v = m["version"]
        illegal = next(a for a in range(1, 2000) if a not in {x["id"] for x in m["legal"]})
        for bad in (
            {"type": "act", "action": illegal, "version": v},
            {"type": "act", "action": "3", "version": v},
            {"type": "act", "action": m["legal"][0]["id"], "version": v + 5},
            {"type": "speed", "level": 2},
            {"type": "nonsense"},
            [1, 2],
        ):
            ws.send_text(json.dumps(bad))
            err = ws.receive_json()
            assert err["type"] == "error", bad
            state = ws.receive_json()
            assert state["version"] == v and state["hand"] == m["hand"]
        ws.send_text("{not json")
        assert ws.receive_json()["type"] == "error"
    assert c.get("/api/replay", params={"name": "../../etc/passwd"}).status_code == 400
    bad = c.post(
        "/api/replay", content=b'{"format": "x"}', headers={"Content-Type": "application/json"}
    )
    assert bad.status_code == 400
    with c.websocket_connect("/ws/nosuchtable") as ws:
        assert ws.receive_json()["type"] == "error"


def test_watch_tables_step_and_show_hands_only_on_request(client):
    c, _ = client
    tid = _table(c, seats=["heuristic", "random", "heuristic", "random"], seed=2)
    with c.websocket_connect(f"/ws/{tid}") as ws:
        m = ws.receive_json()
        assert m["watch"] and m["paused"] and m["hand"] is None
        assert all(s["hand"] is None for s in m["seats"])
        ws.send_json({"type": "step"})
        m = ws.receive_json()
        assert m["version"] == 1
        ws.send_json({"type": "show_hands", "show": True})
        m = ws.receive_json()
        assert all(isinstance(s["hand"], list) for s in m["seats"])
        assert sum(len(s["hand"]) for s in m["seats"]) == sum(s["left"] for s in m["seats"])
        ws.send_json({"type": "act", "action": 0})
        assert ws.receive_json()["type"] == "error"


def test_a_second_tab_sees_the_same_game(client):
    c, _ = client
    tid = _table(c, seed=9, options={"leader": 0})
    with c.websocket_connect(f"/ws/{tid}") as a:
        m = a.receive_json()
        a.send_json({"type": "act", "action": m["legal"][-1]["id"], "version": m["version"]})
        while True:
            m = a.receive_json()
            if m["your_turn"] or m["phase"] != "play":
                break
    with c.websocket_connect(f"/ws/{tid}") as b:
        again = b.receive_json()
    assert again["version"] == m["version"] and again["hand"] == m["hand"]


def test_tables_refuse_bad_seating():
    with pytest.raises(ValueError, match="4 seats"):
        WebTable(["human", "random"])
    with pytest.raises(ValueError, match="mode"):
        WebTable(["human", "random", "random", "random"], mode="tournament")


def test_a_match_goes_on_deal_after_deal_until_a_team_passes_a(client):
    c, out = client
    tid = _table(
        c,
        seats=["human", "random", "heuristic", "random"],
        mode="match",
        seed=4,
        options={"levels": ["A", "K"], "leveling_team": 0},
    )
    deals = 0
    with c.websocket_connect(f"/ws/{tid}") as ws:
        last = -1
        while deals < 60:
            m = ws.receive_json()
            assert m["type"] != "error", m
            if m["phase"] == "over":
                break
            if m["phase"] == "result" and m["version"] != last:
                last = m["version"]
                deals += 1
                assert m["result"]["tribute_next"]  # who pays whom next deal
                ws.send_json({"type": "continue"})
            elif m["your_turn"] and m["version"] != last:
                last = m["version"]
                ws.send_json(
                    {"type": "act", "action": m["legal"][-1]["id"], "version": m["version"]}
                )
    assert m["phase"] == "over" and m["result"]["match_winner"] in (0, 1)
    assert len(m["results"]) == deals + 1


def test_web_cli_refuses_a_bad_table(tmp_path):
    from experiments.web.__main__ import main

    for argv in (["--seat", "9"], ["--seat", "0", "--opponents", "nosuch"], ["--port", "-1"]):
        with pytest.raises(SystemExit) as e:
            main([*argv, "--out", str(tmp_path)])
        assert e.value.code == 2
