// The page's words: one table per language (static/i18n/<lang>.json). The language is the
// one chosen on the page (remembered), else ?lang=, else the browser's.
const LANGS = ["zh", "en"];
const KEY = "guandan.lang";
let words = {};
export let lang = "en";

export function pickLang() {
  const q = new URLSearchParams(location.search).get("lang");
  if (LANGS.includes(q)) { localStorage.setItem(KEY, q); return q; }
  const saved = localStorage.getItem(KEY);
  if (LANGS.includes(saved)) return saved;
  return (navigator.language || "en").toLowerCase().startsWith("zh") ? "zh" : "en";
}

export async function load(l) {
  lang = LANGS.includes(l) ? l : "en";
  words = await (await fetch(`/static/i18n/${lang}.json`)).json();
  document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
  document.title = t("title");
}

export function save(l) { localStorage.setItem(KEY, l); }

// t("left", {n: 3}) -> "3 left"; a missing key shows itself (a test finds it)
export function t(key, params) {
  let s = words[key];
  if (s === undefined) return key;
  for (const [k, v] of Object.entries(params || {})) s = s.split(`{${k}}`).join(String(v));
  return s;
}

// fill every [data-i18n] element (its data-* attributes are the parameters)
export function apply(root = document) {
  for (const e of root.querySelectorAll("[data-i18n]")) e.textContent = t(e.dataset.i18n, e.dataset);
}
