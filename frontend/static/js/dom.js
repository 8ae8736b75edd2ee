// Small DOM and formatting helpers shared by the pages.

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    // Through the CSSOM: a style attribute set as markup would break the Content-Security-Policy (no inline styles).
    else if (key === "style") node.style.cssText = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function badge(value, label) {
  return el("span", { class: `badge ${value}` }, label || value);
}

export function number(value, digits = 0) {
  if (value === null || value === undefined) return "–";
  return Number(value).toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: 0 });
}

export function compact(value) {
  if (value === null || value === undefined) return "–";
  const n = Number(value);
  if (Math.abs(n) >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (Math.abs(n) >= 1e4) return `${(n / 1e3).toFixed(1)}k`;
  return number(n, n < 10 ? 1 : 0);
}

export function ms(value) {
  if (value === null || value === undefined) return "–";
  return value >= 1000 ? `${(value / 1000).toFixed(1)} s` : `${Math.round(value)} ms`;
}

export function age(seconds) {
  if (seconds === null || seconds === undefined) return "–";
  if (seconds < 60) return `${Math.round(seconds)} s`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

export function ageOfMillis(timestamp) {
  if (timestamp === null || timestamp === undefined) return null;
  return Math.max(0, (Date.now() - timestamp) / 1000);
}

// Times of day are 24-hour on every page ("13:05", never "1:05 PM"), whatever the browser's locale says.
const CLOCK = { hour: "2-digit", minute: "2-digit", hourCycle: "h23" };
const DAY = { day: "numeric", month: "short" };

export function clock(date) {
  return new Date(date).toLocaleTimeString("en-GB", CLOCK);
}

// "24 Nov 13:05–13:20", or "24 Nov 23:30–25 Nov 00:30" across midnight (the browser's time zone); an open end is now.
export function timeSpan(since, until) {
  const from = new Date(since);
  const to = until ? new Date(until) : new Date();
  const day = (d) => d.toLocaleDateString("en-GB", DAY);
  const sameDay = from.toDateString() === to.toDateString();
  return `${day(from)} ${clock(from)}–${sameDay ? "" : `${day(to)} `}${clock(to)}`;
}

export function when(iso) {
  if (!iso) return "–";
  return new Date(iso).toLocaleString("en-GB", { dateStyle: "medium", timeStyle: "medium", hourCycle: "h23" });
}

export function clear(node, ...children) {
  node.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
}

export function table(headers, rows, { empty = "Nothing yet." } = {}) {
  const head = el(
    "tr",
    {},
    headers.map((h) => el("th", { class: h.num ? "num" : "" }, h.label ?? h)),
  );
  const body = rows.length ? rows : [el("tr", {}, el("td", { colspan: headers.length, class: "muted" }, empty))];
  return el("table", { class: "data" }, el("thead", {}, head), el("tbody", {}, body));
}

export function alert(kind, text) {
  return el("div", { class: `alert ${kind}`, role: kind === "error" ? "alert" : "status" }, text);
}

export const role = () => document.body.dataset.role || "";
export const canOperate = () => ["operator", "admin"].includes(role());
export const canAdmin = () => role() === "admin";

// One banner per container for the current problem: a new one replaces the old (never a stack of them), and
// banner(container, null) clears it.
export function banner(container, kind, text) {
  const old = container.querySelector(":scope > .banner");
  if (!text) {
    old?.remove();
    return;
  }
  const fresh = alert(kind, text);
  fresh.classList.add("banner");
  if (old) old.replaceWith(fresh);
  else container.prepend(fresh);
}
