// The web table's page: lobby, table, replays with the review, results. The server is the
// authority: this code only shows what it is sent and sends the id of a legal declaration
// back. Every word comes from the language tables (i18n.js).
import { apply, load, pickLang, save, t, lang } from "./i18n.js";
import { agentName, cardEl, cardName, cardsEl, columns, declText, el, rankText } from "./cards.js";

const $ = (sel) => document.querySelector(sel);
let rerender = () => {};  // the current page's render (called again on a language switch)

function show(id) {
  for (const m of document.querySelectorAll("main")) m.hidden = m.id !== id;
}

// ------------------------------------------------------------------ agents (the server's list)
let offered = { agents: [], strongest: "heuristic" };
async function fillAgents(select) {
  offered = await (await fetch("/api/agents")).json();
  for (const sel of document.querySelectorAll(select || ".agent-list")) {
    const keep = sel.value;
    sel.replaceChildren(...offered.agents.map((a) => {
      const o = el("option", null, agentName(a));
      o.value = a;
      o.title = a;
      return o;
    }));
    sel.value = offered.agents.includes(keep) ? keep : offered.strongest;
  }
  document.body.dataset.agents = offered.agents.length;
}
function relabelAgents() {
  for (const o of document.querySelectorAll(".agent-list option")) o.textContent = agentName(o.value);
}

// ------------------------------------------------------------------ lobby
const CHOICE = "guandan.choice";  // the visitor's last choice (localStorage)

function remembered() {
  try { return JSON.parse(localStorage.getItem(CHOICE)) || {}; } catch { return {}; }
}

async function createTable(body) {
  const r = await fetch("/api/tables", { method: "POST", body: JSON.stringify(body),
                                         headers: { "Content-Type": "application/json" } });
  const out = await r.json();
  if (!r.ok) { $("#lobby-error").textContent = t("error", { msg: out.error }); return; }
  location.href = "/table/" + out.table;
}

function seatsFor(seat, partner, opp) {
  if (seat === "watch") return [partner, opp, partner, opp];
  const s = Number(seat);
  return [0, 1, 2, 3].map((i) => (i === s ? "human" : (i % 2 === s % 2 ? partner : opp)));
}

async function lobby() {
  show("lobby");
  await fillAgents();
  const form = $("#new-game");
  const mem = remembered();
  const valid = (a) => offered.agents.includes(a);
  form.partner.value = valid(mem.partner) ? mem.partner : offered.strongest;
  form.opponents.value = valid(mem.opponents) ? mem.opponents : offered.strongest;
  if (mem.seat !== undefined) form.seat.value = mem.seat;
  if (mem.mode) form.mode.value = mem.mode;
  rerender = () => {
    relabelAgents();
    $("#quick-sub").textContent = t("lobby.quick_sub", {
      partner: agentName(form.partner.value), opponents: agentName(form.opponents.value) });
  };
  rerender();
  form.partner.onchange = form.opponents.onchange = rerender;
  // one click: seat 0 with a partner against two agents, the remembered (or strongest) ones
  $("#quick").onclick = () => {
    const choice = { seat: "0", partner: form.partner.value, opponents: form.opponents.value, mode: "deal" };
    localStorage.setItem(CHOICE, JSON.stringify(choice));
    createTable({ seats: seatsFor("0", choice.partner, choice.opponents), mode: "deal" });
  };
  form.onsubmit = async (ev) => {
    ev.preventDefault();
    const f = new FormData(ev.target);
    const choice = { seat: f.get("seat"), partner: f.get("partner") || "heuristic",
                     opponents: f.get("opponents") || "heuristic", mode: f.get("mode") };
    localStorage.setItem(CHOICE, JSON.stringify(choice));
    const body = { seats: seatsFor(choice.seat, choice.partner, choice.opponents), mode: choice.mode,
                   random_levels: !!f.get("random_levels"), random_tribute: !!f.get("random_tribute") };
    if (f.get("seed")) body.seed = Number(f.get("seed"));
    createTable(body);
  };
}

// ------------------------------------------------------------------ table
let ws = null;
let state = null;
let selected = [];  // indices into state.hand
let hinted = null;  // the last hint: {action, cards, prob, agent, version}
const GROUP = "guandan.group";

function seatName(st, s) {
  const agent = agentName(s.spec);
  if (s.role === "you") return t("role.you");
  if (s.role === "partner") return t("role.partner", { agent });
  if (s.role === "opponent") return t("role.opponent", { agent });
  return t("role.seat", { n: s.seat, agent });
}
const nameOf = (st, seat) => seatName(st, st.seats[seat]);
// where a seat sits, seen from yours (the centre of the table points at it)
function placeOf(st, seat) {
  if (st.viewer === null) return t("role.seat", { n: seat, agent: agentName(st.seats[seat].spec) });
  return t(["pos.you", "pos.right", "pos.partner", "pos.left"][(seat - st.viewer + 4) % 4]);
}

function tablePage(id) {
  show("table");
  fillAgents("#hint-agent");
  $("#group").checked = localStorage.getItem(GROUP) === "1";
  $("#group").onchange = (e) => { localStorage.setItem(GROUP, e.target.checked ? "1" : "0"); render(); };
  const proto = location.protocol === "https:" ? "wss" : "ws";
  ws = new WebSocket(`${proto}://${location.host}/ws/${id}`);
  ws.onmessage = (ev) => {
    const msg = JSON.parse(ev.data);
    if (msg.type === "error") { $("#table-error").textContent = t("error", { msg: msg.error }); return; }
    $("#table-error").textContent = "";
    if (msg.type === "hint") { showHint(msg); return; }
    const handChanged = !state || JSON.stringify(state.hand) !== JSON.stringify(msg.hand);
    state = msg;
    if (handChanged || !msg.your_turn) selected = [];
    if (hinted && hinted.version !== msg.version) hinted = null;
    render();
  };
  ws.onclose = () => { $("#table-error").textContent = t("disconnected"); };
  $("#pass").onclick = () => playKind("pass");
  $("#clear").onclick = () => { selected = []; render(); };
  $("#hint").onclick = askHint;
  $("#pause").onclick = () => send({ type: "pause", paused: !state.paused });
  $("#step").onclick = () => send({ type: "step" });
  $("#speed").onchange = (e) => send({ type: "speed", level: Number(e.target.value) });
  $("#show-hands").onchange = (e) => send({ type: "show_hands", show: e.target.checked });
  document.onkeydown = (e) => {
    if (!state || e.target.tagName === "INPUT" || e.target.tagName === "SELECT") return;
    const opts = choices();
    if (e.key === "Escape") { selected = []; render(); }
    else if (e.key === "p" || e.key === "P") playKind("pass");
    else if (e.key === "h" || e.key === "H") askHint();
    else if ((e.key === "c" || e.key === "C") && state.result) send({ type: "continue" });
    else if (e.key === "Enter" && opts.length === 1) act(opts[0].id);
    else if (/^[1-9]$/.test(e.key) && opts[Number(e.key) - 1]) act(opts[Number(e.key) - 1].id);
  };
  rerender = () => { relabelAgents(); if (state) render(); };
}

function send(msg) { if (ws && ws.readyState === 1) ws.send(JSON.stringify(msg)); }
function act(id) { selected = []; hinted = null; send({ type: "act", action: id, version: state.version }); }
function playKind(kind) {
  const a = (state.legal || []).find((x) => x.kind === kind);
  if (a) act(a.id);
}
function askHint() {
  if (state && state.your_turn) send({ type: "hint", agent: $("#hint-agent").value || null });
}

// a hint: its cards become the selection (highlighted), its words say who and how sure
function showHint(h) {
  hinted = h;
  selected = [];
  const want = [...h.cards];
  state.hand.forEach((c, i) => { const j = want.indexOf(c.card); if (j >= 0) { want.splice(j, 1); selected.push(i); } });
  render();
}

// the legal declarations whose cards are exactly the selected ones (one per reading)
function choices() {
  if (!state || !state.your_turn || !selected.length) return [];
  const sel = selected.map((i) => state.hand[i].card).sort().join(" ");
  return (state.legal || []).filter((a) => a.variants.some((v) => [...v].sort().join(" ") === sel));
}

function seatBox(box, st, s) {
  box.replaceChildren();
  box.classList.toggle("acting", st.to_act === s.seat);
  box.classList.toggle("mine", s.role === "you");
  const head = el("div", "seat-head");
  const name = el("b", "seat-name", seatName(st, s));
  name.title = s.spec;
  head.append(name);
  if (s.place) head.append(el("span", "badge place" + s.place, t("place." + s.place)));
  box.append(head);
  const n = el("div", "left" + (s.left && s.left <= 10 ? " warn" : ""));
  n.append(el("span", "back"), el("span", null, t(s.left && s.left <= 10 ? "left_warn" : "left", { n: s.left })));
  if (st.to_act === s.seat) n.append(el("span", "turn", " ◀ " + t("to_act")));
  if (st.thinking === s.seat) n.append(el("span", "thinking", " " + t("thinking")));
  box.append(n);
  const last = el("div", "last");
  if (s.last) {
    last.append(el("div", "decl", declText(s.last.decl)));
    if (s.last.cards.length) last.append(cardsEl(s.last.cards, st.level));
  }
  box.append(last);
  if (s.hand && s.role !== "you") box.append(cardsEl(s.hand, st.level));
}

function info(st) {
  const box = $("#info");
  const me = st.viewer;
  const us = me === null ? 0 : me % 2;
  const lv = (x) => rankText(x);
  const levels = me === null
    ? t("info.levels_watch", { a: lv(st.levels[0]), b: lv(st.levels[1]) })
    : t("info.levels", { us: lv(st.levels[us]), them: lv(st.levels[1 - us]) });
  const parts = [el("span", null, t("info.deal", { n: st.deal }) + " · " + t("info.level") + " "),
                 el("b", "level", lv(st.level))];
  if (st.leveling_team !== null && me !== null) {
    parts.push(el("span", null, " " + t(st.leveling_team === us ? "info.ours" : "info.theirs")));
  }
  parts.push(el("span", null, " · " + levels));
  parts.push(el("span", null, " · " + t(st.mode === "match" ? "mode.match" : "mode.deal") + (st.watch ? " · " + t("info.watching") : "")));
  box.replaceChildren(...parts);
}

function handEl(st) {
  const hand = $("#hand");
  hand.replaceChildren();
  const hintCards = hinted ? new Set(selected) : new Set();
  for (const col of columns(st.hand || [], st.level, $("#group").checked)) {
    const c = el("div", "col" + (col.label ? " grouped" : ""));
    if (col.label) c.append(el("div", "col-label", t("group." + col.label)));
    for (const { c: card, i } of col.cards) {
      const extra = (selected.includes(i) ? "selected" : "") + (hintCards.has(i) ? " hinted" : "");
      const e = cardEl(card, st.level, extra.trim());
      e.dataset.index = i;
      e.onclick = () => {
        if (!st.your_turn) return;
        selected = selected.includes(i) ? selected.filter((j) => j !== i) : [...selected, i];
        hinted = null;
        render();
      };
      c.append(e);
    }
    hand.append(c);
  }
}

function trackerEl(st) {
  const box = $("#tracker");
  box.hidden = !st.tracker;
  box.replaceChildren();
  if (!st.tracker) return;
  box.append(el("h3", null, t("tracker.title")), el("span", "hint", t("tracker.note")));
  const grid = el("div", "tracker-grid");
  for (const r of st.tracker.ranks) {
    const cell = el("div", "tcell" + (r.level ? " lvl" : "") + (r.left ? "" : " gone"));
    cell.dataset.rank = r.rank;
    const joker = r.rank === "BJ" || r.rank === "RJ";
    cell.append(el("div", "trank" + (r.rank === "RJ" ? " red" : ""), joker ? t("tracker.jk." + r.rank) : r.rank),
                el("div", "tleft", String(r.left)));
    if (joker) cell.title = t("joker." + r.rank);
    if (r.level) cell.title = t("level_card");
    grid.append(cell);
  }
  box.append(grid, el("div", "twild", t("tracker.wild", { rank: rankText(st.level), n: st.tracker.wild })));
  box.dataset.total = st.tracker.total;
}

function render() {
  const st = state;
  document.body.dataset.version = st.version;  // what a test (or a curious user) can wait on
  document.body.dataset.phase = st.phase;
  document.body.dataset.yourTurn = st.your_turn;
  const me = st.viewer;
  const base = me === null ? 0 : me;
  const rel = (k) => st.seats[(base + k) % 4];
  info(st);
  seatBox($("#seat-top"), st, rel(2));
  seatBox($("#seat-left"), st, rel(3));
  seatBox($("#seat-right"), st, rel(1));
  seatBox($("#my-seat"), st, rel(0));
  const tp = $("#table-play");
  tp.replaceChildren();
  if (st.table_play) {
    tp.append(el("div", "muted", t("to_beat", { who: placeOf(st, st.table_play.seat) })),
              el("div", "decl big", declText(st.table_play.decl)), cardsEl(st.table_play.cards, st.level));
  } else if (st.phase === "play") {
    tp.append(el("div", "muted", st.your_turn ? t("leads_you") : t("leads", { who: placeOf(st, st.to_act) })));
  } else if (st.phase === "return") tp.append(el("div", "muted", t("returns", { who: placeOf(st, st.to_act) })));
  const tr = $("#tributes");
  tr.replaceChildren();
  if (st.resisted) tr.append(el("div", "muted", t("resisted")));
  for (const x of st.tributes) {
    const d = el("div", "muted", t("tribute", { from: nameOf(st, x.giver), to: nameOf(st, x.receiver) }));
    d.append(cardEl({ card: x.card, wild: false }, st.level));
    tr.append(d);
  }
  handEl(st);
  $("#controls").hidden = me === null;
  $("#watch-controls").hidden = !st.watch;
  const box = $("#choices");
  box.replaceChildren();
  if (st.your_turn) {
    const opts = choices();
    if (selected.length && !opts.length) box.append(el("span", "error", t("choice.none")));
    opts.forEach((a, k) => {
      const text = st.phase === "return" ? t("choice.return", { card: cardName(a.variants[0][0]) })
                                         : t("choice.play", { decl: declText(a.decl) });
      const b = el("button", "choice" + (hinted && hinted.action === a.id ? " hinted" : ""), `${k + 1}. ${text}`);
      b.dataset.action = a.id;
      b.onclick = () => act(a.id);
      box.append(b);
    });
    if (!selected.length && !(hinted && hinted.action === 0)) {
      box.append(el("span", "muted", t(st.phase === "return" ? "choice.select_return" : "choice.select")));
    }
  }
  $("#pass").disabled = !(st.your_turn && (st.legal || []).some((a) => a.kind === "pass"));
  $("#pass").classList.toggle("hinted", !!(hinted && hinted.action === 0));
  $("#hint").disabled = !st.your_turn;
  const ht = $("#hint-text");
  ht.replaceChildren();
  if (hinted) {
    ht.append(el("span", "hint-play", t("hint.play", { agent: agentName(hinted.agent), play: declText(hinted.decl) }) + " · "),
              el("span", "hint-prob", hinted.prob === null ? t("hint.rule") : t("hint.prob", { p: pct(hinted.prob) })));
  }
  const list = $("#legal");
  list.replaceChildren();
  for (const a of st.legal || []) {
    const li = el("li", null, declText(a.decl) + " ");
    li.dataset.kind = a.kind;
    if (a.variants[0] && a.variants[0].length) li.append(cardsEl(a.variants[0].map((c) => ({ card: c, wild: st.hand.some((h) => h.card === c && h.wild) })), st.level));
    li.onclick = () => {
      if (a.kind === "pass") { act(a.id); return; }
      const want = [...a.variants[0]];
      selected = [];
      hinted = null;
      st.hand.forEach((c, i) => { const j = want.indexOf(c.card); if (j >= 0) { want.splice(j, 1); selected.push(i); } });
      render();
    };
    list.append(li);
  }
  trackerEl(st);
  const log = $("#log");
  log.replaceChildren(el("h3", null, t("log.title")));
  for (const e of st.log) {
    let text;
    if (e.kind === "return") {
      text = e.cards.length ? t("log.returned", { who: nameOf(st, e.seat), what: cardName(e.cards[0].card), to: nameOf(st, e.return_to) })
                            : t("log.returned_hidden", { who: nameOf(st, e.seat), to: nameOf(st, e.return_to) });
    } else text = `${nameOf(st, e.seat)}: ${declText(e.decl)} `;
    const row = el("div", null, text);
    if (e.kind !== "return") row.append(cardsEl(e.cards, st.level));
    log.append(row);
  }
  resultEl(st);
  if (st.watch) $("#pause").textContent = t(st.paused ? "watch.play" : "watch.pause");
}

const pct = (p) => `${(100 * p).toFixed(p >= 0.1 ? 0 : 1)}%`;

function resultEl(st) {
  const res = $("#result");
  res.hidden = !st.result;
  res.replaceChildren();
  if (!st.result) return;
  const r = st.result;
  const me = st.viewer;
  const team = me === null ? null : me % 2;
  res.append(el("h2", null, team === null ? t("result.team_wins", { t: r.winner_team, n: r.gain })
    : t(r.winner_team === team ? "result.you_win" : "result.they_win", { n: r.gain })));
  const order = el("div", "order");
  order.append(el("span", null, t("result.order")));
  r.order.forEach((s, k) => {
    const p = el("span", "placed");
    p.append(el("span", "badge place" + (k + 1), t("place." + (k + 1))), el("span", null, " " + nameOf(st, s)));
    order.append(p);
  });
  if (r.double_down) order.append(el("span", "badge dd", t("result.double_down")));
  res.append(order);
  const lv = r.levels.map(rankText);
  res.append(el("p", null, team === null ? t("result.levels_watch", { a: lv[0], b: lv[1] })
    : t("result.levels", { us: lv[team], them: lv[1 - team] })));
  const tn = r.tribute_next;
  if (tn) {
    const names = (xs) => xs.map((s) => nameOf(st, s)).join(t("and"));
    res.append(el("p", null, t(tn.double ? "result.tribute_double" : "result.tribute_single",
      { from: names(tn.givers), to: names(tn.receivers) })));
  }
  if (r.match_winner !== null && r.match_winner !== undefined) {
    res.append(el("p", null, team === null ? t("result.match_team", { t: r.match_winner })
      : t(r.match_winner === team ? "result.match_you" : "result.match_them")));
  }
  const buttons = el("p");
  if (st.phase === "over") {
    const a = el("a", "button", t("result.new"));
    a.href = "/";
    buttons.append(a);
  } else {
    const b = el("button", null, t("result.continue"));
    b.id = "continue";
    b.onclick = () => send({ type: "continue" });
    buttons.append(b);
  }
  if (me !== null) {
    const a = el("a", "button", t("result.review"));
    a.id = "review-link";
    a.href = `/review?table=${encodeURIComponent(st.table)}`;
    buttons.append(" ", a);
  }
  res.append(buttons);
}

// ------------------------------------------------------------------ replays and the review
let frames = [];
let pos = 0;
let source = null;  // how to ask for the review: {name} | {file text} | {table}
let review = null;
let rvPos = -1;

async function replaysPage(reviewOnly) {
  show("replays");
  await fillAgents("#review-agent");
  const sel = $("#replay-list");
  const { replays } = await (await fetch("/api/replays")).json();
  for (const n of replays) sel.append(el("option", null, n));
  $("#replay-open").onclick = async () => {
    source = { name: sel.value };
    loadFrames(await fetch("/api/replay?name=" + encodeURIComponent(sel.value)));
  };
  $("#replay-file").onchange = async (e) => {
    const text = await e.target.files[0].text();
    source = { text };
    loadFrames(await fetch("/api/replay", { method: "POST", body: text,
                                            headers: { "Content-Type": "application/json" } }));
  };
  $("#rp-first").onclick = () => goto(0);
  $("#rp-prev").onclick = () => goto(pos - 1);
  $("#rp-next").onclick = () => goto(pos + 1);
  $("#rp-last").onclick = () => goto(frames.length - 1);
  $("#rp-slider").oninput = (e) => goto(Number(e.target.value));
  $("#review-run").onclick = runReview;
  $("#rv-prev").onclick = () => reviewGo(rvPos - 1);
  $("#rv-next").onclick = () => reviewGo(rvPos + 1);
  document.onkeydown = (e) => {
    if (e.target.tagName === "INPUT" || e.target.tagName === "SELECT") return;
    if (e.key === "ArrowLeft") goto(pos - 1);
    if (e.key === "ArrowRight") goto(pos + 1);
  };
  rerender = () => { relabelAgents(); if (frames.length) goto(pos); if (review) reviewTable(); };
  const q = new URLSearchParams(location.search);
  if (reviewOnly) {  // a live table's finished deals: the review alone (no hands)
    for (const p of document.querySelectorAll("#replays > p")) p.hidden = true;
    source = { table: q.get("table") };
    $("#review").hidden = false;
    const back = $("#review-back");
    back.hidden = false;
    back.href = "/table/" + encodeURIComponent(source.table);
    runReview();
  } else if (q.get("name")) { sel.value = q.get("name"); $("#replay-open").click(); }
}

async function loadFrames(resp) {
  const out = await resp.json();
  if (!resp.ok) { $("#replay-error").textContent = t("error", { msg: out.error }); return; }
  $("#replay-error").textContent = "";
  frames = out.frames;  // a hand sent as null is the previous frame's
  frames.forEach((f, k) => { f.hands = f.hands.map((h, s) => (h === null ? frames[k - 1].hands[s] : h)); });
  $("#rp-slider").max = frames.length - 1;
  $("#replay-view").hidden = false;
  review = null;
  $("#review").hidden = false;
  $("#review-table tbody").replaceChildren();
  $("#rv-pos").textContent = "";
  goto(0);
}

function goto(k) {
  pos = Math.max(0, Math.min(frames.length - 1, k));
  const f = frames[pos];
  $("#rp-pos").textContent = t("replays.step", { k: pos, n: frames.length - 1 });
  $("#rp-slider").value = pos;
  const box = $("#rp-frame");
  const head = t("replays.frame", { deal: f.deal, level: rankText(f.level), a: rankText(f.levels[0]), b: rankText(f.levels[1]) });
  box.replaceChildren(el("p", null, head + (f.table_decl ? t("replays.to_beat", { decl: declText(f.table_decl) }) : "")));
  if (f.move) {
    const m = el("p", "move", t("replays.move", { n: f.move.seat }) + declText(f.move.decl) + " ");
    m.append(cardsEl(f.move.cards, f.level));
    box.append(m);
  }
  f.hands.forEach((h, s) => {
    const row = el("div", "rp-hand", t("replays.seat", { n: s, left: f.left[s] }));
    row.append(cardsEl(h.split(" ").filter(Boolean).map((c) => ({ card: c, wild: c === f.wild })), f.level));
    box.append(row);
  });
  if (f.result) {
    box.append(el("p", "result", t("replays.over", { order: f.result.order.join(", "), t: f.result.winner_team, n: f.result.gain })));
  }
  if (review) {  // the review row of this decision, if it is one
    const k2 = review.rows.findIndex((r) => r.index === pos);
    if (k2 >= 0 && k2 !== rvPos) { rvPos = k2; reviewTable(); }
  }
}

async function runReview() {
  const agent = encodeURIComponent($("#review-agent").value || offered.strongest);
  let resp;
  if (source.table) resp = await fetch(`/api/review?table=${encodeURIComponent(source.table)}&agent=${agent}`);
  else if (source.name) resp = await fetch(`/api/review?name=${encodeURIComponent(source.name)}&agent=${agent}`);
  else resp = await fetch(`/api/review?agent=${agent}`, { method: "POST", body: source.text,
                                                          headers: { "Content-Type": "application/json" } });
  const out = await resp.json();
  if (!resp.ok) { $("#replay-error").textContent = t("error", { msg: out.error }); return; }
  review = out;
  rvPos = -1;
  reviewTable();
  reviewGo(0);
}

function reviewGo(k) {
  if (!review || !review.rows.length) return;
  rvPos = Math.max(0, Math.min(review.rows.length - 1, k));
  reviewTable();
  if (frames.length) goto(review.rows[rvPos].index);
}

function reviewTable() {
  const body = $("#review-table tbody");
  body.replaceChildren();
  document.body.dataset.reviewRows = review.rows.length;
  document.body.dataset.reviewPos = rvPos;
  if (!review.rows.length) { $("#rv-pos").textContent = t("review.none"); return; }
  $("#rv-pos").textContent = t("review.pos", { k: rvPos + 1, n: review.rows.length });
  review.rows.forEach((r, k) => {
    const tr = el("tr", (r.marked ? "marked" : "") + (k === rvPos ? " current" : ""));
    tr.dataset.index = r.index;
    const p = r.p_played === null ? t("hint.rule") : pct(r.p_played);
    for (const v of [(r.marked ? "● " : "") + (k + 1), r.deal, r.table ? declText(r.table) : t("review.lead"),
                     declText(r.played), r.same ? t("review.same") : declText(r.agent), p]) tr.append(el("td", null, String(v)));
    tr.onclick = () => reviewGo(k);
    body.append(tr);
  });
  const cur = body.querySelector("tr.current");
  if (cur && cur.scrollIntoView) cur.scrollIntoView({ block: "nearest" });
}

// ------------------------------------------------------------------ results
async function resultsPage() {
  show("results");
  const { results } = await (await fetch("/api/results")).json();
  const body = $("#results-table tbody");
  const ci = (x) => `${x[0]} [${x[1]}, ${x[2]}]`;
  rerender = () => {
    body.replaceChildren();
    for (const r of results) {
      const tr = el("tr");
      const opp = r.opponents.split(" / ").map(agentName).join(" / ");
      for (const v of [opp, r.games, r.deals, ci(r.human_gain_per_deal), ci(r.human_deal_win_rate)]) tr.append(el("td", null, String(v)));
      body.append(tr);
    }
  };
  rerender();
}

// ------------------------------------------------------------------ start
async function main() {
  await load(pickLang());
  apply();
  const sw = $("#lang");
  sw.value = lang;
  sw.onchange = async () => { save(sw.value); await load(sw.value); apply(); rerender(); document.body.dataset.lang = lang; };
  document.body.dataset.lang = lang;
  const path = location.pathname;
  if (path.startsWith("/table/")) tablePage(path.split("/")[2]);
  else if (path === "/replays") replaysPage(false);
  else if (path === "/review") replaysPage(true);
  else if (path === "/results") resultsPage();
  else lobby();
}
main();
