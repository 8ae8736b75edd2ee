// The dashboard's charts over time: all flows together (records/s copied and entering replication, total lag) over
// the picked range, from /api/v1/dashboard/history/; each point says how many flows it sums.
import { get } from "./api.js";
import { onThemeChange } from "./palette.js";
import { axisRange, historyQuery, picker } from "./time-range.js";
import { chart } from "./timechart.js";

const REFRESH_MS = 5000;
const note = document.getElementById("chart-range-note");
let shown = null;
let chartWindow = picker("chart-range", (window) => {
  chartWindow = window;
  refresh();
});

function draw(history, range, emptyText) {
  shown = [history, range, emptyText];
  const flows = history.samples.map((s) => `${s.flows} flow${s.flows === 1 ? "" : "s"}`);
  const node = (id) => document.getElementById(id);
  chart(node("chart-copied"), history.samples, "records_per_second", "chart-rps", range, emptyText, flows);
  chart(node("chart-entering"), history.samples, "entering_per_second", "chart-p99", range, emptyText, flows);
  chart(node("chart-total-lag"), history.samples, "lag", "chart-lag", range, emptyText, flows);
}

async function refresh() {
  try {
    const history = await get(`/api/v1/dashboard/history/?${historyQuery(chartWindow)}`);
    draw(
      history,
      axisRange(chartWindow, history.samples),
      chartWindow.minutes ? "No samples yet" : "No samples in this window",
    );
    if (note.textContent.startsWith("Could not load")) note.textContent = "";
    const counts = history.samples.map((s) => s.flows);
    const [fewest, most] = [Math.min(...counts), Math.max(...counts)];
    document.getElementById("over-time-flows").textContent = !counts.length
      ? ""
      : fewest === most
        ? `each point sums ${most} flow${most === 1 ? "" : "s"}`
        : `each point sums the flows sampled in it: ${fewest} to ${most}`;
    document.getElementById("chart-range-merged").textContent =
      `each point merges ${history.bucket_seconds} s of samples (rates averaged, lag at its peak, per flow)`;
  } catch (error) {
    note.textContent = `Could not load the charts: ${error.message}`;
  }
}

onThemeChange(() => {
  if (shown) draw(...shown);
});
refresh();
setInterval(() => {
  if (chartWindow.minutes) refresh();
}, REFRESH_MS);
