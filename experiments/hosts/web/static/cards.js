// Cards, declarations and agent names as the page shows them, in the page's language.
import { t } from "./i18n.js";

export const SUIT = { S: "♠", H: "♥", C: "♣", D: "♦" };
// natural order 2..A, then the jokers; the level rank is moved just below the jokers
const NATURAL = ["2", "3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K", "A"];
export const rankText = (r) => (r === "T" ? "10" : r);
const rankOf = (code) => (code === "BJ" || code === "RJ" ? code : code.slice(1));

export const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};

// strength in level order: 2..A without the level rank, the level rank, BJ, RJ
export function strength(code, level) {
  const r = rankOf(code);
  if (r === "BJ") return 14;
  if (r === "RJ") return 15;
  const lv = level === "10" ? "T" : level;
  if (r === lv) return 13;
  return NATURAL.indexOf(r);
}

// one card: rank and suit in the corner (readable when stacked), ★ on a wildcard, a mark
// on the other level cards; data-card keeps the engine's code (HT)
export function cardEl(c, level, extra) {
  const code = c.card;
  const joker = code === "BJ" || code === "RJ";
  const e = el("span", "card" + (extra ? " " + extra : ""));
  e.dataset.card = code;
  const red = code === "RJ" || (!joker && (code[0] === "H" || code[0] === "D"));
  if (red) e.classList.add("red");
  if (joker) {
    e.classList.add("joker");
    e.append(el("span", "rk", t("joker_face." + code)));
    e.title = t("joker." + code);
  } else {
    const corner = el("span", "corner");
    corner.append(el("span", "rk", rankText(code.slice(1))), el("span", "st", SUIT[code[0]]));
    e.append(corner, el("span", "pip", SUIT[code[0]]));
    if (c.wild) { e.classList.add("wild"); e.title = t("wildcard"); e.append(el("span", "star", "★")); }
    else if (level && strength(code, level) === 13) {
      e.classList.add("lvl"); e.title = t("level_card"); e.append(el("span", "lmark", t("level_mark")));
    }
  }
  return e;
}

export function cardsEl(cards, level) {
  const box = el("span", "cards");
  for (const c of cards || []) box.append(cardEl(c, level));
  return box;
}

// a declaration ({kind, body, suit, wilds} from the server) in words
export function declText(d) {
  if (!d) return "";
  const body = (d.body || "").replace(/\b(BJ|RJ)\b/g, (m) => t("joker." + m));
  const suit = d.suit ? SUIT[d.suit] + " " : "";
  const parts = [t("kind." + d.kind)];
  if (d.kind === "return") parts.push(body ? cardName(d.body) : "");
  else if (body) parts.push(suit + body);
  if (d.wilds) parts.push(t("wilds", { n: d.wilds }));
  return parts.filter(Boolean).join(" ");
}

// a card code as words: ♥10, 大王
export function cardName(code) {
  if (code === "BJ" || code === "RJ") return t("joker." + code);
  return SUIT[code[0]] + rankText(code.slice(1));
}

// an agent spec as a person reads it ("heuristic", "trained default")
export function agentName(spec) {
  if (!spec) return "";
  const [name, arg] = [spec.split(":")[0], spec.split(":").slice(1).join(":")];
  if (name === "heuristic" && !arg) return t("agent.heuristic");
  if (name === "random") return t("agent.random");
  if (name === "human") return t("agent.human");
  if (name === "checkpoint") return t("agent.checkpoint", { name: arg.replace(/\/+$/, "").split("/").pop() });
  if (name === "pretrained") return t("agent.pretrained", { name: arg });
  return t("agent.other", { name: spec });
}

// the hand in columns by rank, strongest first (level order); with ``group`` bombs and
// straight flushes (natural cards, no wildcard) first, each in its own column. Returns
// [{label, cards: [{c, i}]}] where i is the card's index in the hand.
export function columns(hand, level, group) {
  const items = hand.map((c, i) => ({ c, i }));
  const out = [];
  let rest = items;
  if (group) {
    for (const sf of straightFlushes(rest)) {
      out.push({ label: "straight_flush", cards: sf });
      const used = new Set(sf.map((x) => x.i));
      rest = rest.filter((x) => !used.has(x.i));
    }
  }
  const byRank = new Map();
  for (const x of rest) {
    const s = strength(x.c.card, level);
    const key = x.c.card === "BJ" || x.c.card === "RJ" ? 14 : s;  // the jokers: one column
    if (!byRank.has(key)) byRank.set(key, []);
    byRank.get(key).push(x);
  }
  const cols = [...byRank.entries()].sort((a, b) => b[0] - a[0]).map(([, cards]) => ({
    label: null, cards: cards.sort((a, b) => strength(b.c.card, level) - strength(a.c.card, level) || (a.c.wild - b.c.wild)),
  }));
  if (group) {
    for (const col of cols) {
      const jokers = col.cards.every((x) => x.c.card === "BJ" || x.c.card === "RJ");
      if (jokers && col.cards.length === 4) col.label = "four_jokers";
      else if (!jokers && col.cards.length >= 4) col.label = "bomb";
    }
    cols.sort((a, b) => (b.label ? 1 : 0) - (a.label ? 1 : 0));
  }
  return [...out, ...cols];
}

// straight flushes of five natural cards (ace low or high), strongest first, greedily
function straightFlushes(items) {
  const seqRanks = ["A", ...NATURAL];  // A-2-3-4-5 .. 10-J-Q-K-A
  const found = [];
  let pool = items.filter((x) => !x.c.wild && x.c.card !== "BJ" && x.c.card !== "RJ");
  for (const suit of "SHCD") {
    for (let top = seqRanks.length - 1; top >= 4; top--) {
      for (;;) {
        const take = [];
        for (let k = top - 4; k <= top; k++) {
          const x = pool.find((y) => y.c.card === suit + seqRanks[k] && !take.includes(y));
          if (!x) break;
          take.push(x);
        }
        if (take.length < 5) break;
        found.push(take.reverse());
        pool = pool.filter((y) => !take.includes(y));
      }
    }
  }
  return found;
}
