// /audit/: the audit log a page at a time, filtered by user, action, object and time (the API validates each
// filter and names a bad one), with what each change did: the fields whose values differ before and after.
import { get, latest, problem } from "./api.js";
import { alert, clear, el, number, table, when } from "./dom.js";

const PAGE = 50;
const form = document.getElementById("audit-filters");
const box = document.getElementById("audit");
const query = { offset: 0, filters: {} };

function shown(value) {
  if (value === null || value === undefined || value === "") return "–";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

// Bookkeeping every save moves: the record's own time says when.
const STAMPS = new Set(["created_at", "updated_at"]);

// One line per field that changed: "field: before → after"; a create lists its values, a delete what it removed.
function changes(record) {
  const before = record.before || {};
  const after = record.after || {};
  // By name: Postgres's jsonb keeps keys in its own order, SQLite in the written one.
  const names = [...new Set([...Object.keys(before), ...Object.keys(after)])]
    .sort()
    .filter((name) => !STAMPS.has(name) && JSON.stringify(before[name]) !== JSON.stringify(after[name]));
  if (!names.length) return el("span", { class: "muted" }, "no field changed");
  return el(
    "ul",
    { class: "plain" },
    names.map((name) => {
      const from = name in before ? `${shown(before[name])} → ` : "";
      const to = name in after ? shown(after[name]) : "(removed)";
      return el("li", { class: "mono" }, `${name}: ${from}${to}`);
    }),
  );
}

function row(record) {
  const object = [record.object_type, record.object_id && `#${record.object_id}`, record.object_repr]
    .filter(Boolean)
    .join(" ");
  return el(
    "tr",
    { "data-audit": record.id },
    el("td", { class: "nowrap" }, when(record.at)),
    el("td", {}, record.actor || "–"),
    el("td", { class: "mono" }, record.action),
    el("td", {}, object || "–"),
    el("td", {}, changes(record)),
  );
}

// "2026-11-28 13:05" (or with seconds) in the browser's time zone, 24-hour, as the UTC instant the API takes; any
// other text goes to the API as typed, which names the field it cannot read.
const LOCAL_TIME = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(?::(\d{2}))?$/;

function instant(text) {
  const m = LOCAL_TIME.exec(text);
  if (!m) return text;
  const [year, month, day, hour, minute, second] = m.slice(1).map((part) => Number(part || 0));
  return new Date(year, month - 1, day, hour, minute, second).toISOString();
}

// The form's filters as API parameters, empty ones left out.
function filters() {
  const out = {};
  for (const [name, value] of new FormData(form).entries()) {
    const text = String(value).trim();
    if (!text) continue;
    out[name] = name === "since" || name === "until" ? instant(text) : text;
  }
  return out;
}

const begin = latest();

async function load() {
  const current = begin();
  try {
    const q = new URLSearchParams({ ...query.filters, limit: PAGE, offset: query.offset });
    const page = await get(`/api/v1/audit/?${q}`);
    if (!current()) return;
    const last = query.offset + page.results.length;
    document.getElementById("audit-range").textContent = page.count
      ? `${number(query.offset + 1)}–${number(last)} of ${number(page.count)}`
      : "";
    document.getElementById("audit-prev").disabled = query.offset === 0;
    document.getElementById("audit-next").disabled = last >= page.count;
    const filtered = Object.keys(query.filters).length > 0;
    clear(
      box,
      table(["Time", "User", "Action", "Object", "Changes"], page.results.map(row), {
        empty: filtered ? "No audit record matches these filters." : "No audit records yet.",
      }),
    );
  } catch (error) {
    if (!current()) return;
    clear(box, alert("error", problem(error)));
  }
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  Object.assign(query, { filters: filters(), offset: 0 });
  load();
});
form.addEventListener("reset", () => {
  Object.assign(query, { filters: {}, offset: 0 });
  setTimeout(load); // after the browser has emptied the inputs
});
document.getElementById("audit-prev").addEventListener("click", () => {
  query.offset = Math.max(0, query.offset - PAGE);
  load();
});
document.getElementById("audit-next").addEventListener("click", () => {
  query.offset += PAGE;
  load();
});
load();
