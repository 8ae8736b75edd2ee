// /flows/: the flows a page at a time (the API pages them), searchable, with live health, throughput and lag of
// that page's flows from /api/v1/dashboard/edges/ (never the whole graph).
import { get, latest } from "./api.js";
import { alert, badge, clear, compact, el, ms, number, table } from "./dom.js";

const PAGE = 100;
const query = { offset: 0, search: "" };

function row(flow, edge) {
  return el(
    "tr",
    {},
    el("td", {}, el("a", { href: `/flows/${flow.id}/` }, flow.name)),
    el("td", { class: "mono" }, flow.topics.join(", ")),
    el("td", {}, edge ? badge(edge.health) : "–"),
    el("td", { class: "num" }, edge ? `${compact(edge.records_per_second)}/s` : "–"),
    el("td", { class: "num" }, edge ? compact(edge.lag) : "–"),
    el("td", { class: "num" }, edge ? ms(edge.latency_p99_ms) : "–"),
    el("td", {}, flow.exactly_once ? "exactly once" : "at least once"),
  );
}

const begin = latest(); // a load shows its answer only if no later load began meanwhile

async function load() {
  const current = begin();
  const box = document.getElementById("flows");
  try {
    const q = new URLSearchParams({ limit: PAGE, offset: query.offset });
    if (query.search) q.set("search", query.search);
    const page = await get(`/api/v1/flows/?${q}`);
    const flows = page.results;
    const live = flows.length
      ? await get(`/api/v1/dashboard/edges/?flows=${flows.map((f) => f.id).join(",")}`)
      : { edges: [] };
    if (!current()) return;
    const last = query.offset + flows.length;
    document.getElementById("flows-range").textContent = page.count
      ? `${number(query.offset + 1)}–${number(last)} of ${number(page.count)}`
      : "";
    document.getElementById("flows-prev").disabled = query.offset === 0;
    document.getElementById("flows-next").disabled = last >= page.count;
    const edges = Object.fromEntries(live.edges.map((e) => [e.id, e]));
    const headers = [
      "Flow",
      "topics",
      "Health",
      { label: "Records/s", num: true },
      { label: "Lag", num: true },
      { label: "p99 latency", num: true },
      "Delivery",
    ];
    clear(
      box,
      table(
        headers,
        flows.map((f) => row(f, edges[f.id])),
        { empty: query.search ? `No flow matches “${query.search}”.` : "No flows yet." },
      ),
    );
  } catch (error) {
    if (!current()) return;
    clear(box, alert("error", error.message));
  }
}

let searchTimer = null;
document.getElementById("flows-search").addEventListener("input", (event) => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(() => {
    Object.assign(query, { search: event.target.value.trim(), offset: 0 });
    load();
  }, 250);
});
document.getElementById("flows-prev").addEventListener("click", () => {
  query.offset = Math.max(0, query.offset - PAGE);
  load();
});
document.getElementById("flows-next").addEventListener("click", () => {
  query.offset += PAGE;
  load();
});
load();
