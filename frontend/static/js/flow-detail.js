// /flows/<id>/: charts over time, tasks and partitions, checkpoint freshness, analytics reports, operations.
import { ApiError, get, post } from "./api.js";
import { age, ageOfMillis, alert, badge, clear, compact, el, ms, number, table, timeSpan, when } from "./dom.js";
import { color as themeColor, onThemeChange, withAlpha } from "./palette.js";
import { auditChart, latencyCharts, purgeCharts, topologyGraph } from "./report-charts.js";

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

// Samples with a break (null) wherever the sampler took none for over three of its usual intervals (the flow or the
// sampler stopped): the line then stops there instead of sloping across time with no data.
function withGaps(samples, key) {
  const times = samples.map((s) => Date.parse(s.at));
  const steps = times
    .slice(1)
    .map((t, i) => t - times[i])
    .sort((a, b) => a - b);
  const usual = steps.length ? steps[Math.floor(steps.length / 2)] : 0;
  const x = [],
    y = [];
  samples.forEach((s, i) => {
    if (i > 0 && usual > 0 && times[i] - times[i - 1] > 3 * usual) {
      x.push(new Date((times[i] + times[i - 1]) / 2).toISOString());
      y.push(null);
    }
    x.push(s.at);
    y.push(s[key]);
  });
  return { x, y };
}

function chart(node, samples, key, colorName, emptyText = "No samples yet") {
  const color = themeColor(colorName),
    panel = themeColor("panel");
  const { x, y } = withGaps(samples, key);
  const trace = {
    type: "scatter",
    mode: "lines",
    x,
    y,
    connectgaps: false,
    line: { color, width: 2, shape: "spline", smoothing: 0.3 },
    fill: "tozeroy",
    fillcolor: withAlpha(color, 0.13),
    hoverinfo: "x+y",
  };
  const layout = {
    margin: { l: 48, r: 10, t: 6, b: 30 },
    height: 200,
    showlegend: false,
    paper_bgcolor: panel,
    plot_bgcolor: panel,
    xaxis: {
      type: "date",
      showgrid: false,
      linecolor: themeColor("line"),
      tickfont: { size: 10 },
      nticks: 6,
      range: xRange(samples),
    },
    yaxis: {
      rangemode: "tozero",
      gridcolor: themeColor("grid"),
      zerolinecolor: themeColor("line"),
      tickfont: { size: 10 },
      nticks: 5,
    },
    font: { family: "system-ui, sans-serif", color: themeColor("muted") },
    hoverlabel: { bgcolor: panel, bordercolor: color, font: { color: themeColor("fg") } },
    annotations: samples.length
      ? []
      : [
          {
            text: emptyText,
            showarrow: false,
            xref: "paper",
            yref: "paper",
            x: 0.5,
            y: 0.5,
            font: { color: themeColor("faint") },
          },
        ],
  };
  window.Plotly.react(node, [trace], layout, { displayModeBar: false, responsive: true });
}

// The three charts; redrawn from the last samples when the theme changes.
let shownSamples = null;
function charts(samples) {
  shownSamples = samples;
  chart(document.getElementById("chart-rps"), samples, "records_per_second", "chart-rps");
  chart(document.getElementById("chart-lag"), samples, "lag", "chart-lag");
  chart(document.getElementById("chart-p99"), samples, "latency_p99_ms", "chart-p99");
}
onThemeChange(() => {
  if (shownSamples) charts(shownSamples);
  if (partitionLag.samples) partitionChart();
});

// One partition's lag (GET /api/v1/flows/<id>/partitions/lag-history/), shown under the partitions table when its
// row is clicked. Asking for it also keeps the sampler sampling that partition while the chart is open.
const partitionLag = { topic: null, partition: null, samples: null };

function partitionChart() {
  const node = document.getElementById("chart-partition-lag");
  chart(node, partitionLag.samples, "lag", "chart-lag", "No data");
}

async function showPartitionLag() {
  if (partitionLag.topic === null) return;
  const q = new URLSearchParams({ topic: partitionLag.topic, partition: partitionLag.partition, minutes: 30 });
  const body = await get(`/api/v1/flows/${id}/partitions/lag-history/?${q}`);
  if (body.topic !== partitionLag.topic || body.partition !== partitionLag.partition) return; // another was clicked
  partitionLag.samples = body.samples;
  partitionChart();
}

function markSelected() {
  for (const tr of document.querySelectorAll("#partitions tr[data-topic]")) {
    const selected = tr.dataset.topic === partitionLag.topic && Number(tr.dataset.part) === partitionLag.partition;
    tr.classList.toggle("selected", selected);
  }
}

function openPartition(topic, partition) {
  Object.assign(partitionLag, { topic, partition, samples: null });
  document.getElementById("partition-lag-name").textContent = `${topic}-${partition}`;
  document.getElementById("partition-lag").hidden = false;
  markSelected();
  showPartitionLag().catch((error) =>
    clear(document.getElementById("chart-partition-lag"), alert("error", error.message)),
  );
}

function setTile(name, value, sub) {
  const tile = document.querySelector(`[data-tile="${name}"]`);
  tile.querySelector(".value").textContent = value;
  if (sub !== undefined) tile.querySelector(".sub").textContent = sub;
}

// The flow status (GET /api/v1/flows/<id>/status/: FlowStatus, TaskStatus and PartitionStatus in /api/schema/)
// has every documented field on every task and partition; where a value is unknown it is null, not missing.

// An unplaced task (no worker has a free slot) says so in its state and names the reason.
function stateBadge(task) {
  return task.placement === "unplaced" ? badge("UNPLACED") : badge(task.state);
}

function whereText(task) {
  if (task.worker) return `on ${task.worker}`;
  if (task.placement === "unplaced") return "not placed: no worker has a free slot";
  if (task.placement === "idle") return task.idle_reason;
  return task.placement === "dispatched" ? "dispatched, starting" : "not running";
}

// What is wrong with a task, most pressing first: no worker can take it, it failed (data loss stays stopped until
// a restart), it reports a lasting fault, or its configuration matches nothing (a warning, not an error).
function taskProblem(task) {
  if (task.placement === "unplaced") return el("span", { class: "err" }, task.unplaced_reason);
  if (task.state === "FAILED") {
    const kind = task.failure === "DATA_LOSS" ? "data loss (stopped until the flow is restarted)" : "error (retried)";
    return el("span", { class: "err" }, `${kind}: ${task.last_error}`);
  }
  if (task.fault) return el("span", { class: "err" }, task.fault);
  return task.warning ? el("span", { class: "warn" }, `warning: ${task.warning}`) : "";
}

function taskRows(status) {
  const headers = [
    "Task",
    "State",
    "Where",
    { label: "Partitions", num: true },
    { label: "Lag", num: true },
    { label: "p99", num: true },
    { label: "Records", num: true },
    "Problem",
  ];
  const rows = status.tasks.map((t) =>
    el(
      "tr",
      { "data-task": t.task_id, "data-placement": t.placement },
      el("td", {}, `task ${t.task_id}`),
      el("td", {}, stateBadge(t)),
      el("td", { class: "muted" }, whereText(t)),
      el("td", { class: "num" }, number(t.partition_count)),
      el("td", { class: "num" }, number(t.lag)),
      el("td", { class: "num" }, ms(t.latency_p99_ms)),
      el("td", { class: "num" }, number(t.records)),
      el("td", {}, taskProblem(t)),
    ),
  );
  return table(headers, rows, { empty: "No tasks yet: the controller assigns them within seconds." });
}

// The partitions, a page at a time (the status API pages them: a flow may have thousands).
const PAGE = 100;
const partitionQuery = { offset: 0, topic: "", order: "partition" };

// A partition no live task holds (its task unplaced, paused or stopped) is listed all the same, with a badge: its
// position and lag are the observer's, from the flow's stored position and the source end offset.
function partitionTask(p) {
  if (p.task_id === null) return "–";
  if (p.task_state === "running") return `task ${p.task_id}`;
  const label = p.task_state === "unplaced" ? "UNPLACED" : "STOPPED";
  return el("span", { class: "nowrap" }, `task ${p.task_id} `, badge(label));
}

function partitionRows(page) {
  const headers = [
    "Partition",
    "Task",
    { label: "Replicated position", num: true },
    { label: "Lag", num: true },
    { label: "p99", num: true },
    { label: "Records", num: true },
    { label: "Lost", num: true },
    "Loss reason",
  ];
  const rows = page.results.map((p) =>
    el(
      "tr",
      {
        "data-partition": `${p.topic}-${p.partition}`,
        "data-topic": p.topic,
        "data-part": String(p.partition),
        title: "Show this partition's lag over time",
      },
      el("td", { class: "mono" }, `${p.topic}-${p.partition}`),
      el("td", {}, partitionTask(p)),
      el("td", { class: "num" }, number(p.position)),
      el("td", { class: "num" }, number(p.lag)),
      el("td", { class: "num" }, ms(p.latency_p99_ms)),
      el("td", { class: "num" }, number(p.record_count)),
      el("td", { class: p.lost_records ? "num err" : "num" }, number(p.lost_records)),
      el("td", { class: "err" }, p.last_loss_reason ?? ""),
    ),
  );
  const empty = partitionQuery.topic
    ? `No partition of a topic matching “${partitionQuery.topic}”.`
    : "No partition reported yet: tasks report within seconds of starting.";
  return table(headers, rows, { empty });
}

function pager(page) {
  const last = Math.min(page.offset + page.results.length, page.count);
  document.getElementById("partitions-range").textContent = page.count
    ? `${number(page.offset + 1)}–${number(last)} of ${number(page.count)}`
    : "0 partitions";
  document.getElementById("partitions-prev").disabled = page.offset === 0;
  document.getElementById("partitions-next").disabled = last >= page.count;
}

function statusUrl() {
  const q = new URLSearchParams({ limit: PAGE, offset: partitionQuery.offset, order: partitionQuery.order });
  if (partitionQuery.topic) q.set("topic", partitionQuery.topic);
  return `/api/v1/flows/${id}/status/?${q}`;
}

function tasks(status) {
  clear(document.getElementById("tasks"), taskRows(status));
  clear(document.getElementById("partitions"), partitionRows(status.partitions));
  markSelected();
  pager(status.partitions);
  const provisioning = status.provisioning;
  const errors = [
    status.controller_error && `controller: ${status.controller_error}`,
    provisioning.error && `provisioning the flow's topics failed (retried): ${provisioning.error}`,
    ...status.tasks
      .filter((t) => t.state === "FAILED")
      .map(
        (t) => `task ${t.task_id} ${t.failure === "DATA_LOSS" ? "stopped on data loss" : "failed"}: ${t.last_error}`,
      ),
  ];
  const unplaced = status.tasks.filter((t) => t.placement === "unplaced");
  clear(
    document.getElementById("errors"),
    errors.filter(Boolean).map((e) => alert("error", e)),
    unplaced.map((t) =>
      alert(
        "error",
        `task ${t.task_id} is not placed: ${t.unplaced_reason}. Add a worker or raise MIRRORPLANE_WORKER_SLOTS.`,
      ),
    ),
  );
  const live = status.tasks.filter((t) => t.live).length;
  const waiting = !provisioning.provisioned && !provisioning.error ? " · provisioning topics" : "";
  setTile(
    "tasks",
    `${live} / ${status.tasks.length}`,
    `running / assigned${unplaced.length ? ` · ${unplaced.length} unplaced` : ""}${waiting}`,
  );
  document.getElementById("pause")?.toggleAttribute("hidden", status.paused);
  document.getElementById("resume")?.toggleAttribute("hidden", !status.paused);
}

function checkpoints(answer) {
  document.getElementById("checkpoints-at").textContent = answer.at ? `read ${when(answer.at)}` : "";
  const rows = Object.entries(answer.groups).map(([group, c]) =>
    el(
      "tr",
      {},
      el("td", { class: "mono" }, group),
      el("td", { class: "num" }, c.partitions),
      el("td", { class: "num" }, age(ageOfMillis(c.timestamp))),
      el("td", { class: "num" }, age(ageOfMillis(c.oldest))),
    ),
  );
  const headers = [
    "Consumer group",
    { label: "Partitions", num: true },
    { label: "Newest", num: true },
    { label: "Oldest partition", num: true },
  ];
  clear(
    document.getElementById("checkpoints"),
    answer.error ? alert("warn", answer.error) : null,
    table(headers, rows, { empty: "No checkpoints yet for this flow's groups." }),
  );
}

// -- reports: run a job over a window (operators), follow its status, show what it found about this flow -------
const RUNS_SHOWN = 5;
const REPORT_POLL_MS = 3000;
let flowName = null;
let reportTimer = null;

function figures(f) {
  const parts = [];
  if (f.facts !== undefined) parts.push(`${number(f.facts)} facts`);
  if (f.records !== undefined) parts.push(`${number(f.records)} records`);
  if (f.source_records !== undefined) parts.push(`${number(f.source_records)} source records`);
  if (f.missing !== undefined) parts.push(`${number(f.missing)} missing`);
  if (f.completeness_pct !== undefined)
    parts.push(f.completeness_pct === null ? "completeness n/a" : `${f.completeness_pct} % complete`);
  if (f.heartbeat_arrivals !== undefined) parts.push(`${number(f.heartbeat_arrivals)} heartbeat arrivals`);
  return parts.join(" · ");
}

// The run's own line: this flow's latency percentiles, or the audit's and topology's whole-lake figures.
function runFindings(run) {
  const s = run.summary || {};
  if (run.status === "FAILED") return el("span", { class: "err" }, run.error);
  if (run.status === "NO_DATA") return el("span", { class: "warn" }, s.note || "no data in this window");
  if (run.status !== "SUCCEEDED")
    return el("span", { class: "muted" }, run.status === "QUEUED" ? "waiting for a worker…" : "running…");
  const mine = (s.flows || []).find((row) => row.flow === flowName);
  const latency = mine
    ? ` · this flow: p50 ${ms(mine.replication_latency_ms_p50)}, p99 ${ms(mine.replication_latency_ms_p99)} over ${number(mine.facts)} facts`
    : "";
  return el("span", {}, figures(s) + latency);
}

// A run's window, compactly and 24-hour (dom.js's timeSpan), or the whole lake when it has no start.
function windowText(since, until) {
  return since ? timeSpan(since, until) : "whole lake";
}

function runs(list) {
  const headers = ["Run", "Job", "Window", "Status", { label: "Duration", num: true }, "Findings"];
  const rows = list.map((r) =>
    el(
      "tr",
      {},
      el("td", { class: "mono" }, `#${r.id}`),
      el("td", {}, r.job),
      el("td", { class: "muted nowrap" }, windowText(r.since, r.until)),
      el(
        "td",
        {},
        badge(
          r.status === "NO_DATA"
            ? "lagging"
            : r.status === "SUCCEEDED"
              ? "healthy"
              : r.status === "FAILED"
                ? "failing"
                : "starting",
          r.status.replace("_", " ").toLowerCase(),
        ),
      ),
      el("td", { class: "num" }, r.duration_seconds === null ? "–" : `${r.duration_seconds.toFixed(1)} s`),
      el("td", { class: "findings" }, runFindings(r)),
    ),
  );
  clear(document.getElementById("report-runs"), table(headers, rows, { empty: "No report runs yet." }));
}

// A report's rows about this flow, one table per section of its summary, with the columns its rows have; times
// (ISO strings such as an audit window's start, epoch ms named last_..._ms) are shown as dates with 24-hour times.
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/;
function reportRows(rows) {
  const sections = new Map();
  for (const row of rows) sections.set(row.section, [...(sections.get(row.section) || []), row]);
  return [...sections].map(([section, list]) => {
    const keys = [...new Set(list.flatMap(Object.keys))].filter((k) => k !== "section" && k !== "flow");
    const numeric = (k) => list.every((row) => row[k] === undefined || row[k] === null || typeof row[k] === "number");
    const cell = (value, key) =>
      typeof value === "number"
        ? key.startsWith("last_") && key.endsWith("_ms") // an epoch time, e.g. a link's last heartbeat
          ? when(value)
          : number(value)
        : value === undefined || value === null
          ? "–"
          : typeof value === "object"
            ? JSON.stringify(value)
            : ISO_TIME.test(value)
              ? when(value)
              : String(value);
    return el(
      "div",
      { class: "report-rows" },
      el("h4", {}, section.replaceAll("_", " ")),
      table(
        keys.map((k) => ({ label: k.replaceAll("_", " "), num: numeric(k) })),
        list.map((row) =>
          el(
            "tr",
            {},
            keys.map((k) => el("td", { class: numeric(k) ? "num" : "" }, cell(row[k], k))),
          ),
        ),
      ),
    );
  });
}

// A report's pictures: what the job charts for this flow (its series; the topology's whole graph).
function reportCharts(r) {
  if (r.job === "latency") return latencyCharts(r.series || []);
  if (r.job === "audit") return auditChart(r.series || []);
  if (r.job === "topology") return topologyGraph(r.no_data ? null : r.graph, flowName);
  return null;
}

// Drawn again only when the answer changed (the poll must not reset a chart under the pointer) or the theme did
// (Plotly's colours are the theme's).
let shownReports = null;
onThemeChange(() => {
  if (shownReports) reports(JSON.parse(shownReports), true);
});

function reports(answer, redraw = false) {
  const text = JSON.stringify(answer);
  if (text === shownReports && !redraw) return;
  shownReports = text;
  const box = document.getElementById("reports");
  purgeCharts(box);
  if (!answer.reports.length) {
    clear(
      box,
      el("p", { class: "muted" }, "No analytics reports yet. Operators run one above; beat runs every job hourly."),
    );
    return;
  }
  const charts = answer.reports.map(reportCharts);
  clear(
    box,
    answer.reports.map((r, i) =>
      el(
        "div",
        { class: "report", "data-job": r.job },
        el(
          "h3",
          {},
          `${r.job} `,
          el("span", { class: "faint" }, `${windowText(r.since, r.until)} · written ${when(r.written_at)}`),
        ),
        r.no_data
          ? alert("warn", r.note || "No data in this report's window.")
          : el("p", { class: "muted" }, `All flows: ${figures(r.figures || {})}`),
        r.flagged_in.length ? alert("warn", `Flagged in: ${r.flagged_in.join(", ")}`) : null,
        charts[i]?.node,
        r.rows.length ? reportRows(r.rows) : el("p", { class: "muted" }, "No row of this report names this flow."),
      ),
    ),
  );
  for (const chart of charts) chart?.draw();
}

async function refreshReports() {
  clearTimeout(reportTimer);
  try {
    const [page, latest] = await Promise.all([
      get(`/api/v1/reports/?limit=${RUNS_SHOWN}`),
      get(`/api/v1/flows/${id}/reports/`),
    ]);
    runs(page.results);
    reports(latest);
    const busy = page.results.some((r) => r.status === "QUEUED" || r.status === "RUNNING");
    reportTimer = setTimeout(refreshReports, busy ? REPORT_POLL_MS : 5 * REPORT_POLL_MS);
  } catch (error) {
    clear(document.getElementById("report-result"), alert("error", `Reports: ${error.message}`));
    reportTimer = setTimeout(refreshReports, 5 * REPORT_POLL_MS); // keep polling after an error
  }
}

// Why a run was refused: the 429's detail names the limit reached (runs queued or running at once), a 400 each
// field that is wrong (the window against the lake's retention, the job's options).
function refusal(error) {
  if (!(error instanceof ApiError) || error.status !== 400 || typeof error.data !== "object") return error.message;
  const text = (v) => (typeof v === "object" && !Array.isArray(v) ? Object.entries(v).map(([k, w]) => `${k} ${w}`) : v);
  return Object.entries(error.data)
    .map(([field, v]) => `${field}: ${[].concat(text(v)).join(" ")}`)
    .join("; ");
}

async function runReport(event) {
  event.preventDefault();
  const form = event.currentTarget;
  const button = form.querySelector("button");
  const until = new Date();
  const since = new Date(until.getTime() - Number(form.minutes.value) * 60 * 1000);
  button.disabled = true;
  try {
    const run = await post("/api/v1/reports/", {
      job: form.job.value,
      since: since.toISOString(),
      until: until.toISOString(),
    });
    clear(document.getElementById("report-result"), alert("ok", `Report #${run.id} (${run.job}) queued.`));
    refreshReports();
  } catch (error) {
    clear(document.getElementById("report-result"), alert("error", refusal(error)));
  } finally {
    button.disabled = false;
  }
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
  const [flow, status, history, edges] = await Promise.all([
    get(`/api/v1/flows/${id}/`),
    get(statusUrl()),
    get(`/api/v1/flows/${id}/history/?minutes=30`),
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
  charts(history.samples);
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
document.getElementById("partition-lag-close").addEventListener("click", () => {
  Object.assign(partitionLag, { topic: null, partition: null, samples: null });
  document.getElementById("partition-lag").hidden = true;
  markSelected();
});
for (const button of document.querySelectorAll("[data-op]")) button.addEventListener("click", operate);
refresh().catch((error) => clear(document.getElementById("errors"), alert("error", error.message)));
document.getElementById("report-form")?.addEventListener("submit", runReport);
get(`/api/v1/flows/${id}/`)
  .then((flow) => {
    flowName = flow.name;
  })
  .catch(() => {})
  .finally(refreshReports);
setInterval(() => refresh().catch(() => {}), REFRESH_MS);
