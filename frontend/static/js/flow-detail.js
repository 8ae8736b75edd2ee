// /flows/<id>/: charts over time, tasks and partitions, checkpoint freshness, analytics reports, operations.
import { get, post } from "./api.js";
import { age, ageOfMillis, alert, badge, clear, compact, el, ms, number, table, when } from "./dom.js";

const id = document.getElementById("flow").dataset.id;
const REFRESH_MS = 5000;

const WINDOW_MS = 30 * 60 * 1000;
const MIN_WINDOW_MS = 60 * 1000;

// From the first sample (at most 30 minutes back, at least one minute) to now, so a new flow fills the chart.
function xRange(samples) {
  const now = Date.now();
  const first = samples.length ? new Date(samples[0].at).getTime() : now;
  return [new Date(Math.min(Math.max(first, now - WINDOW_MS), now - MIN_WINDOW_MS)), new Date(now)];
}

function chart(node, samples, key, color) {
  const trace = { type: "scatter", mode: "lines", x: samples.map((s) => s.at), y: samples.map((s) => s[key]),
    line: { color, width: 2, shape: "spline", smoothing: 0.3 }, fill: "tozeroy", fillcolor: `${color}22`, hoverinfo: "x+y" };
  const layout = { margin: { l: 48, r: 10, t: 6, b: 30 }, height: 200, showlegend: false, paper_bgcolor: "#fff", plot_bgcolor: "#fff",
    xaxis: { type: "date", showgrid: false, tickfont: { size: 10 }, nticks: 6, range: xRange(samples) },
    yaxis: { rangemode: "tozero", gridcolor: "#eef0f4", tickfont: { size: 10 }, nticks: 5 }, font: { family: "system-ui, sans-serif" },
    annotations: samples.length ? [] : [{ text: "No samples yet", showarrow: false, xref: "paper", yref: "paper", x: 0.5, y: 0.5, font: { color: "#8a93a6" } }] };
  window.Plotly.react(node, [trace], layout, { displayModeBar: false, responsive: true });
}

function setTile(name, value, sub) {
  const tile = document.querySelector(`[data-tile="${name}"]`);
  tile.querySelector(".value").textContent = value;
  if (sub !== undefined) tile.querySelector(".sub").textContent = sub;
}

function partitionRows(task) {
  if (!task.partitions.length) {
    return [el("tr", {}, el("td", {}, `task ${task.task_id}`), el("td", {}, badge(task.state)), el("td", { colspan: 6, class: "muted" }, task.worker ? `on ${task.worker}` : "not running"),
      el("td", { class: "err" }, task.last_error || task.fault || ""))];
  }
  return task.partitions.map((p) => el("tr", {},
    el("td", {}, `task ${task.task_id}`), el("td", {}, badge(task.state)),
    el("td", { class: "mono" }, `${p.topic}-${p.partition}`),
    el("td", { class: "num" }, number(p.position)), el("td", { class: "num" }, number(p.lag)),
    el("td", { class: "num" }, ms(p.latency_p99_ms)), el("td", { class: "num" }, number(p.record_count)),
    el("td", { class: "err" }, p.last_loss_reason || task.last_error || task.fault || "")));
}

function tasks(status) {
  const headers = ["Task", "State", "Partition", { label: "Replicated position", num: true }, { label: "Lag", num: true },
    { label: "p99", num: true }, { label: "Records", num: true }, "Last error"];
  const rows = status.tasks.flatMap(partitionRows);
  clear(document.getElementById("tasks"), table(headers, rows, { empty: "No tasks yet: the controller assigns them within seconds." }));
  const errors = [status.controller_error && `controller: ${status.controller_error}`, ...status.tasks.filter((t) => t.state === "FAILED").map((t) => `task ${t.task_id}: ${t.last_error}`)];
  clear(document.getElementById("errors"), errors.filter(Boolean).map((e) => alert("error", e)));
  const live = status.tasks.filter((t) => t.live).length;
  setTile("tasks", `${live} / ${status.tasks.length}`, "running / assigned");
  document.getElementById("pause")?.toggleAttribute("hidden", status.paused);
  document.getElementById("resume")?.toggleAttribute("hidden", !status.paused);
}

function checkpoints(answer) {
  document.getElementById("checkpoints-at").textContent = answer.at ? `read ${when(answer.at)}` : "";
  const rows = Object.entries(answer.groups).map(([group, c]) => el("tr", {},
    el("td", { class: "mono" }, group), el("td", { class: "num" }, c.partitions),
    el("td", { class: "num" }, age(ageOfMillis(c.timestamp))), el("td", { class: "num" }, age(ageOfMillis(c.oldest)))));
  const headers = ["Consumer group", { label: "Partitions", num: true }, { label: "Newest", num: true }, { label: "Oldest partition", num: true }];
  clear(document.getElementById("checkpoints"), answer.error ? alert("warn", answer.error) : null,
    table(headers, rows, { empty: "No checkpoints yet for this flow's groups." }));
}

function reports(answer) {
  const box = document.getElementById("reports");
  if (!answer.reports.length) {
    clear(box, el("p", { class: "muted" }, "No analytics reports yet. Run the latency, topology or audit job (python -m replication.analytics) to see its findings here."));
    return;
  }
  clear(box, answer.reports.map((r) => el("div", { class: "report" },
    el("h3", {}, `${r.job} `, el("span", { class: "faint" }, `written ${when(r.written_at)}`)),
    r.flagged_in.length ? alert("warn", `Flagged in: ${r.flagged_in.join(", ")}`) : null,
    r.rows.length ? el("pre", { class: "mono" }, r.rows.map((row) => JSON.stringify(row)).join("\n")) : el("p", { class: "muted" }, "Nothing about this flow."))));
}

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
  const [flow, status, history, edges] = await Promise.all([get(`/api/v1/flows/${id}/`), get(`/api/v1/flows/${id}/status/`),
    get(`/api/v1/flows/${id}/history/?minutes=30`), get("/api/v1/dashboard/")]);
  const edge = edges.edges.find((e) => String(e.id) === id);
  const health = document.getElementById("health");
  health.className = `badge ${edge ? edge.health : "outline"}`;
  health.textContent = edge ? edge.health : "unknown";
  setTile("rps", edge ? compact(edge.records_per_second) : "–");
  setTile("lag", edge ? compact(edge.lag) : "–");
  setTile("p99", edge ? ms(edge.latency_p99_ms) : "–");
  document.getElementById("config-summary").textContent = `topics ${flow.topics.join(", ")} · tasks.max ${flow.tasks_max} · ${flow.exactly_once ? "exactly once" : "at least once"}`;
  tasks(status);
  const samples = history.samples;
  chart(document.getElementById("chart-rps"), samples, "records_per_second", "#2f6fdb");
  chart(document.getElementById("chart-lag"), samples, "lag", "#d98b0b");
  chart(document.getElementById("chart-p99"), samples, "latency_p99_ms", "#7a4fd0");
  checkpoints(await get(`/api/v1/flows/${id}/checkpoint-freshness/`));
}

for (const button of document.querySelectorAll("[data-op]")) button.addEventListener("click", operate);
refresh().catch((error) => clear(document.getElementById("errors"), alert("error", error.message)));
get(`/api/v1/flows/${id}/reports/`).then(reports).catch(() => {});
setInterval(() => refresh().catch(() => {}), REFRESH_MS);
