// /flows/<id>/: charts over time, tasks and partitions, checkpoint freshness, analytics reports, operations. Each
// section is a module in flow-detail/; this one refreshes them and wires the page's controls.
import { get, post } from "./api.js";
import { alert, clear, compact, ms } from "./dom.js";
import { charts } from "./flow-detail/charts.js";
import { checkpoints } from "./flow-detail/checkpoints.js";
import { id, setTile } from "./flow-detail/page.js";
import {
  PAGE,
  closePartition,
  openPartition,
  partitionQuery,
  showPartitionLag,
  statusUrl,
} from "./flow-detail/partitions.js";
import { refreshReports, runReport, setFlowName } from "./flow-detail/reports.js";
import { tasks } from "./flow-detail/status.js";
import { axisRange, historyQuery, picker } from "./time-range.js";

const REFRESH_MS = 5000;
let chartWindow = picker("chart-range", (window) => {
  chartWindow = window;
  refresh().catch((error) => clear(document.getElementById("errors"), alert("error", error.message)));
});

async function operate(event) {
  const op = event.currentTarget.dataset.op;
  const box = document.getElementById("op-result");
  try {
    await post(`/api/v1/flows/${id}/${op}/`);
    clear(box, alert("ok", `${op[0].toUpperCase()}${op.slice(1)} requested.`));
    refresh();
  } catch (error) {
    clear(box, alert("error", error.message));
  }
}

async function refresh() {
  const [flow, status, history, edges] = await Promise.all([
    get(`/api/v1/flows/${id}/`),
    get(statusUrl()),
    get(`/api/v1/flows/${id}/history/?${historyQuery(chartWindow)}`),
    get("/api/v1/dashboard/"),
  ]);
  const edge = edges.edges.find((e) => String(e.id) === id);
  const health = document.getElementById("health");
  health.className = `badge ${edge ? edge.health : "outline"}`;
  health.textContent = edge ? edge.health : "unknown";
  setTile("rps", edge ? compact(edge.records_per_second) : "–");
  setTile("lag", edge ? compact(edge.lag) : "–");
  setTile("p99", edge ? ms(edge.latency_p99_ms) : "–");
  document.getElementById("config-summary").textContent =
    `topics ${flow.topics.join(", ")} · tasks.max ${flow.tasks_max} · ${flow.exactly_once ? "exactly once" : "at least once"}`;
  tasks(status);
  charts(
    history.samples,
    axisRange(chartWindow, history.samples),
    chartWindow.minutes ? "No samples yet" : "No samples in this window",
  );
  document.getElementById("chart-range-merged").textContent = history.bucket_seconds
    ? `each point merges ${history.bucket_seconds} s of samples (rates averaged, lag and p99 at their peak)`
    : "";
  await showPartitionLag();
  checkpoints(await get(`/api/v1/flows/${id}/checkpoint-freshness/`));
}

async function showPartitions(change) {
  Object.assign(partitionQuery, change);
  tasks(await get(statusUrl()));
}

let filterTimer = null;
document.getElementById("partitions-filter").addEventListener("input", (event) => {
  clearTimeout(filterTimer);
  filterTimer = setTimeout(() => showPartitions({ topic: event.target.value.trim(), offset: 0 }).catch(() => {}), 250);
});
document.getElementById("partitions-order").addEventListener("change", (event) => {
  showPartitions({ order: event.target.value, offset: 0 }).catch(() => {});
});
document.getElementById("partitions-prev").addEventListener("click", () => {
  showPartitions({ offset: Math.max(0, partitionQuery.offset - PAGE) }).catch(() => {});
});
document.getElementById("partitions-next").addEventListener("click", () => {
  showPartitions({ offset: partitionQuery.offset + PAGE }).catch(() => {});
});
document.getElementById("partitions").addEventListener("click", (event) => {
  const tr = event.target.closest("tr[data-topic]");
  if (tr) openPartition(tr.dataset.topic, Number(tr.dataset.part));
});
document.getElementById("partition-lag-close").addEventListener("click", closePartition);
for (const button of document.querySelectorAll("[data-op]")) button.addEventListener("click", operate);
refresh().catch((error) => clear(document.getElementById("errors"), alert("error", error.message)));
document.getElementById("report-form")?.addEventListener("submit", runReport);
get(`/api/v1/flows/${id}/`)
  .then((flow) => setFlowName(flow.name))
  .catch(() => {})
  .finally(refreshReports);
setInterval(() => refresh().catch(() => {}), REFRESH_MS);
