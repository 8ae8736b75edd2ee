// /flows/: every flow with its live health, throughput and lag from the dashboard endpoint.
import { get } from "./api.js";
import { alert, badge, clear, compact, el, ms, table } from "./dom.js";

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

async function load() {
  const box = document.getElementById("flows");
  try {
    const [flows, dashboard] = await Promise.all([get("/api/v1/flows/"), get("/api/v1/dashboard/")]);
    const edges = Object.fromEntries(dashboard.edges.map((e) => [e.id, e]));
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
        { empty: "No flows yet." },
      ),
    );
  } catch (error) {
    clear(box, alert("error", error.message));
  }
}

load();
