// Analytics reports: run a job over a window (operators), follow its status, show what it found about this flow.
import { ApiError, get, post } from "../api.js";
import { alert, badge, clear, el, ms, number, table, when } from "../dom.js";
import { onThemeChange } from "../palette.js";
import { auditChart, latencyCharts, purgeCharts, topologyGraph } from "../report-charts.js";
import { cellText, columns, fieldErrors, figures, runBadge, sections, windowText } from "./format.js";
import { id } from "./page.js";

const RUNS_SHOWN = 5;
const REPORT_POLL_MS = 3000;
let flowName = null;
let reportTimer = null;

export function setFlowName(name) {
  flowName = name;
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

function runs(list) {
  const headers = ["Run", "Job", "Window", "Status", { label: "Duration", num: true }, "Findings"];
  const rows = list.map((r) =>
    el(
      "tr",
      {},
      el("td", { class: "mono" }, `#${r.id}`),
      el("td", {}, r.job),
      el("td", { class: "muted nowrap" }, windowText(r.since, r.until)),
      el("td", {}, badge(runBadge(r.status), r.status.replace("_", " ").toLowerCase())),
      el("td", { class: "num" }, r.duration_seconds === null ? "–" : `${r.duration_seconds.toFixed(1)} s`),
      el("td", { class: "findings" }, runFindings(r)),
    ),
  );
  clear(document.getElementById("report-runs"), table(headers, rows, { empty: "No report runs yet." }));
}

// A report's rows about this flow, one table per section of its summary, with the columns its rows have.
function reportRows(rows) {
  return sections(rows).map(([section, list]) => {
    const cols = columns(list);
    return el(
      "div",
      { class: "report-rows" },
      el("h4", {}, section.replaceAll("_", " ")),
      table(
        cols.map((c) => ({ label: c.key.replaceAll("_", " "), num: c.numeric })),
        list.map((row) =>
          el(
            "tr",
            {},
            cols.map((c) => el("td", { class: c.numeric ? "num" : "" }, cellText(row[c.key], c.key))),
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

export async function refreshReports() {
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
  return fieldErrors(error.data);
}

export async function runReport(event) {
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
