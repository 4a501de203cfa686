// The web table's page: lobby, table, replays and results. The server is the authority:
// this code only shows what it is sent and sends the id of a legal declaration back.

const $ = (sel) => document.querySelector(sel);
const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};
const SUIT = { S: "♠", H: "♥", C: "♣", D: "♦" };

function cardEl(c, extra) {
  const t = c.card;
  const joker = t === "BJ" || t === "RJ";
  const e = el("span", "card" + (joker ? " joker" : "") + (c.wild ? " wild" : "") + (extra || ""));
  e.textContent = joker ? "JK" : SUIT[t[0]] + (t[1] === "T" ? "10" : t[1]);
  if (joker) e.title = t === "BJ" ? "small joker (小王)" : "big joker (大王)";
  if (t === "RJ" || (!joker && (t[0] === "H" || t[0] === "D"))) e.classList.add("red");
  if (c.wild) e.title = "wildcard (♥ of the level)";
  e.dataset.card = t;
  return e;
}

// our declaration text, for people: "straight_flush H 7-8-9-T-J (1 wild)" reads
// "straight flush ♥ 7-8-9-T-J (1 wild)"
function pretty(text) {
  return text.replace(/_/g, " ").replace(/\b([SHCD]) (?=[0-9TJQKA])/, (m, s) => SUIT[s] + " ");
}

function cardsEl(cards) {
  const box = el("span", "cards");
  for (const c of cards || []) box.append(cardEl(c));
  return box;
}

function show(id) {
  for (const m of document.querySelectorAll("main")) m.hidden = m.id !== id;
}

// ------------------------------------------------------------------ lobby
// the agents a table may seat: only those the server offers (GET /api/agents)
async function fillAgents() {
  const { agents } = await (await fetch("/api/agents")).json();
  for (const sel of document.querySelectorAll(".agent-list")) {
    sel.replaceChildren(...agents.map((a) => el("option", null, a)));
    sel.value = "heuristic";
  }
  document.body.dataset.agents = agents.length;
}

function lobby() {
  show("lobby");
  fillAgents();
  $("#new-game").onsubmit = async (ev) => {
    ev.preventDefault();
    const f = new FormData(ev.target);
    const seat = f.get("seat");
    const partner = f.get("partner") || "heuristic";
    const opp = f.get("opponents") || "heuristic";
    let seats;
    if (seat === "watch") seats = [partner, opp, partner, opp];
    else {
      const s = Number(seat);
      seats = [0, 1, 2, 3].map((i) => (i === s ? "human" : (i % 2 === s % 2 ? partner : opp)));
    }
    const body = { seats, mode: f.get("mode"), random_levels: !!f.get("random_levels"),
                   random_tribute: !!f.get("random_tribute") };
    if (f.get("seed")) body.seed = Number(f.get("seed"));
    const r = await fetch("/api/tables", { method: "POST", body: JSON.stringify(body),
                                           headers: { "Content-Type": "application/json" } });
    const out = await r.json();
    if (!r.ok) { $("#lobby-error").textContent = out.error; return; }
    location.href = "/table/" + out.table;
  };
}

// ------------------------------------------------------------------ table
let ws = null;
let state = null;
let selected = [];  // indices into state.hand

function tablePage(id) {
  show("table");
  const proto = location.protocol === "https:" ? "wss" : "ws";
  ws = new WebSocket(`${proto}://${location.host}/ws/${id}`);
  ws.onmessage = (ev) => {
    const msg = JSON.parse(ev.data);
    if (msg.type === "error") { $("#table-error").textContent = msg.error; return; }
    $("#table-error").textContent = "";
    const handChanged = !state || JSON.stringify(state.hand) !== JSON.stringify(msg.hand);
    state = msg;
    if (handChanged || !msg.your_turn) selected = [];
    render();
  };
  ws.onclose = () => { $("#table-error").textContent = "disconnected: reload to re-attach"; };
  $("#pass").onclick = () => playKind("pass");
  $("#clear").onclick = () => { selected = []; render(); };
  $("#pause").onclick = () => send({ type: "pause", paused: $("#pause").textContent === "Pause" });
  $("#step").onclick = () => send({ type: "step" });
  $("#speed").onchange = (e) => send({ type: "speed", level: Number(e.target.value) });
  $("#show-hands").onchange = (e) => send({ type: "show_hands", show: e.target.checked });
  document.onkeydown = (e) => {
    if (!state || e.target.tagName === "INPUT" || e.target.tagName === "SELECT") return;
    const opts = choices();
    if (e.key === "Escape") { selected = []; render(); }
    else if (e.key === "p" || e.key === "P") playKind("pass");
    else if ((e.key === "c" || e.key === "C") && state.result) send({ type: "continue" });
    else if (e.key === "Enter" && opts.length === 1) act(opts[0].id);
    else if (/^[1-9]$/.test(e.key) && opts[Number(e.key) - 1]) act(opts[Number(e.key) - 1].id);
  };
}

function send(msg) { if (ws && ws.readyState === 1) ws.send(JSON.stringify(msg)); }
function act(id) { selected = []; send({ type: "act", action: id, version: state.version }); }
function playKind(kind) {
  const a = (state.legal || []).find((x) => x.kind === kind);
  if (a) act(a.id);
}

// the legal declarations whose cards are exactly the selected ones (one per reading)
function choices() {
  if (!state || !state.your_turn || !selected.length) return [];
  const sel = selected.map((i) => state.hand[i].card).sort().join(" ");
  return (state.legal || []).filter((a) => a.variants.some((v) => [...v].sort().join(" ") === sel));
}

function seatBox(box, s, isMe) {
  box.replaceChildren();
  const head = el("div", "seat-head");
  head.append(el("b", null, `${s.name}`), el("span", "muted", ` seat ${s.seat} · team ${s.team}`));
  if (state.to_act === s.seat) head.append(el("span", "turn", " ◀ to act"));
  box.append(head);
  const place = s.place ? ` · place ${s.place}` : "";
  box.append(el("div", "left", `${s.left} cards left${place}`));
  const last = el("div", "last");
  if (s.last) { last.append(el("span", "muted", pretty(s.last.text) + " ")); last.append(cardsEl(s.last.cards)); }
  box.append(last);
  if (s.hand && !isMe) box.append(cardsEl(s.hand));
  box.classList.toggle("acting", state.to_act === s.seat);
}

function render() {
  const st = state;
  document.body.dataset.version = st.version;  // what a test (or a curious user) can wait on
  document.body.dataset.phase = st.phase;
  document.body.dataset.yourTurn = st.your_turn;
  const me = st.viewer;
  const base = me === null ? 0 : me;
  const rel = (k) => st.seats[(base + k) % 4];
  $("#info").replaceChildren(
    el("span", null, `Deal ${st.deal} · playing level `), el("b", "level", st.level),
    el("span", null, ` · team levels: team 0 ${st.levels[0]}, team 1 ${st.levels[1]}` +
       (st.leveling_team === null ? "" : ` (team ${st.leveling_team} levels)`) +
       ` · ${st.mode === "match" ? "match" : "single deal"}` + (st.watch ? " · watching" : "")));
  seatBox($("#seat-top"), rel(2));
  seatBox($("#seat-left"), rel(3));
  seatBox($("#seat-right"), rel(1));
  seatBox($("#my-seat"), rel(0), me !== null);
  const tp = $("#table-play");
  tp.replaceChildren();
  if (st.table_play) {
    tp.append(el("div", "muted", `to beat: seat ${st.table_play.seat}`), el("div", "decl", pretty(st.table_play.text)),
              cardsEl(st.table_play.cards));
  } else if (st.phase === "play") tp.append(el("div", "muted", `seat ${st.to_act} leads`));
  else if (st.phase === "return") tp.append(el("div", "muted", `tribute returns: seat ${st.to_act} chooses`));
  const tr = $("#tributes");
  tr.replaceChildren();
  if (st.resisted) tr.append(el("div", "muted", "tribute resisted (both big jokers shown)"));
  for (const t of st.tributes) tr.append(el("div", "muted", `tribute: seat ${t.giver} → seat ${t.receiver}: ${t.card}`));
  // my hand and choices
  const hand = $("#hand");
  hand.replaceChildren();
  (st.hand || []).forEach((c, i) => {
    const e = cardEl(c, selected.includes(i) ? " selected" : "");
    e.onclick = () => {
      if (!st.your_turn) return;
      selected = selected.includes(i) ? selected.filter((j) => j !== i) : [...selected, i];
      render();
    };
    hand.append(e);
  });
  $("#controls").hidden = me === null;
  $("#watch-controls").hidden = !st.watch;
  const box = $("#choices");
  box.replaceChildren();
  if (st.your_turn) {
    const opts = choices();
    if (selected.length && !opts.length) box.append(el("span", "error", "these cards make no legal play"));
    opts.forEach((a, k) => {
      const b = el("button", "choice", `${k + 1}. ${st.phase === "return" ? "return " + a.variants[0][0] : "play as " + pretty(a.text)}`);
      b.onclick = () => act(a.id);
      box.append(b);
    });
    if (!selected.length) box.append(el("span", "muted", st.phase === "return"
      ? "your turn: choose a card to return (R-7.1)" : "your turn: select cards"));
  }
  $("#pass").disabled = !(st.your_turn && (st.legal || []).some((a) => a.kind === "pass"));
  const list = $("#legal");
  list.replaceChildren();
  for (const a of st.legal || []) {
    const li = el("li", null, pretty(a.text) + " ");
    if (a.variants[0] && a.variants[0].length) li.append(el("span", "muted", a.variants[0].join(" ")));
    li.onclick = () => {
      if (a.kind === "pass") { act(a.id); return; }
      const want = [...a.variants[0]];
      selected = [];
      st.hand.forEach((c, i) => { const j = want.indexOf(c.card); if (j >= 0) { want.splice(j, 1); selected.push(i); } });
      render();
    };
    list.append(li);
  }
  const log = $("#log");
  log.replaceChildren(el("h3", null, "Moves"));
  for (const e of st.log) {
    const row = el("div", null, `seat ${e.seat}: ${e.kind === "return" ? e.text + (e.return_to !== null ? " → seat " + e.return_to : "") : e.text} `);
    row.append(cardsEl(e.cards));
    log.append(row);
  }
  const res = $("#result");
  res.hidden = !st.result;
  res.replaceChildren();
  if (st.result) {
    const r = st.result;
    const team = me === null ? null : me % 2;
    const places = r.order.map((s, k) => `${k + 1}. seat ${s}`).join(", ");
    res.append(el("h2", null, team === null ? `Team ${r.winner_team} wins +${r.gain}` :
      (r.winner_team === team ? `Your team wins +${r.gain}` : `The opponents win +${r.gain}`)));
    res.append(el("p", null, `Finishing order: ${places}${r.double_down ? " (double down)" : ""}. ` +
      `Levels now: team 0 ${r.levels[0]}, team 1 ${r.levels[1]}.`));
    if (r.tribute_next) res.append(el("p", null, "Next deal: " + r.tribute_next));
    if (r.match_winner !== null && r.match_winner !== undefined) res.append(el("p", null, `Team ${r.match_winner} wins the match.`));
    if (st.phase === "over") {
      const a = el("a", null, "New game");
      a.href = "/";
      res.append(a);
    } else {
      const b = el("button", null, "Continue (C)");
      b.id = "continue";
      b.onclick = () => send({ type: "continue" });
      res.append(b);
    }
  }
  if (st.watch) $("#pause").textContent = st.paused ? "Play" : "Pause";
}

// ------------------------------------------------------------------ replays
let frames = [];
let pos = 0;

async function replaysPage() {
  show("replays");
  const r = await fetch("/api/replays");
  const { replays } = await r.json();
  const sel = $("#replay-list");
  for (const n of replays) sel.append(el("option", null, n));
  $("#replay-open").onclick = async () => loadFrames(await fetch("/api/replay?name=" + encodeURIComponent(sel.value)));
  $("#replay-file").onchange = async (e) => {
    const text = await e.target.files[0].text();
    loadFrames(await fetch("/api/replay", { method: "POST", body: text,
                                            headers: { "Content-Type": "application/json" } }));
  };
  $("#rp-first").onclick = () => goto(0);
  $("#rp-prev").onclick = () => goto(pos - 1);
  $("#rp-next").onclick = () => goto(pos + 1);
  $("#rp-last").onclick = () => goto(frames.length - 1);
  $("#rp-slider").oninput = (e) => goto(Number(e.target.value));
  document.onkeydown = (e) => {
    if (e.key === "ArrowLeft") goto(pos - 1);
    if (e.key === "ArrowRight") goto(pos + 1);
  };
  const want = new URLSearchParams(location.search).get("name");
  if (want) { sel.value = want; $("#replay-open").click(); }
}

async function loadFrames(resp) {
  const out = await resp.json();
  if (!resp.ok) { $("#replay-error").textContent = out.error; return; }
  $("#replay-error").textContent = "";
  frames = out.frames;  // a hand sent as null is the previous frame's
  frames.forEach((f, k) => { f.hands = f.hands.map((h, s) => (h === null ? frames[k - 1].hands[s] : h)); });
  $("#rp-slider").max = frames.length - 1;
  $("#replay-view").hidden = false;
  goto(0);
}

function goto(k) {
  pos = Math.max(0, Math.min(frames.length - 1, k));
  const f = frames[pos];
  $("#rp-pos").textContent = `step ${pos} / ${frames.length - 1}`;
  $("#rp-slider").value = pos;
  const box = $("#rp-frame");
  box.replaceChildren(el("p", null, `Deal ${f.deal} · level ${f.level} · team levels ${f.levels[0]} / ${f.levels[1]}` +
    (f.table ? ` · to beat: ${f.table}` : "")));
  if (f.move) {
    const m = el("p", "move", `seat ${f.move.seat}: ${f.move.text} `);
    m.append(cardsEl(f.move.cards));
    box.append(m);
  }
  f.hands.forEach((h, s) => {
    const row = el("div", "rp-hand", `seat ${s} (${f.left[s]}): `);
    row.append(cardsEl(h.split(" ").filter(Boolean).map((c) => ({ card: c, wild: c === f.wild }))));
    box.append(row);
  });
  if (f.result) box.append(el("p", "result", `deal over: order ${f.result.order.join(", ")}, team ${f.result.winner_team} +${f.result.gain}`));
}

// ------------------------------------------------------------------ results
async function resultsPage() {
  show("results");
  const { results } = await (await fetch("/api/results")).json();
  const body = $("#results-table tbody");
  const ci = (x) => `${x[0]} [${x[1]}, ${x[2]}]`;
  for (const r of results) {
    const tr = el("tr");
    for (const v of [r.opponents, r.games, r.deals, ci(r.human_gain_per_deal), ci(r.human_deal_win_rate)]) tr.append(el("td", null, String(v)));
    body.append(tr);
  }
}

const path = location.pathname;
if (path.startsWith("/table/")) tablePage(path.split("/")[2]);
else if (path === "/replays") replaysPage();
else if (path === "/results") resultsPage();
else lobby();
