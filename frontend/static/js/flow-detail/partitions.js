// The partitions, a page at a time (the status API pages them: a flow may have thousands), and one partition's lag
// over time (GET /api/v1/flows/<id>/partitions/lag-history/), shown under the table when its row is clicked.
// Asking for it also keeps the sampler sampling that partition while the chart is open.
import { get } from "../api.js";
import { alert, badge, clear, el, ms, number, table } from "../dom.js";
import { onThemeChange } from "../palette.js";
import { chart } from "../timechart.js";
import { pagerState, statusQuery } from "./format.js";
import { id } from "./page.js";
import { axisRange } from "../time-range.js";

const PARTITION_MINUTES = 30; // a partition's lag chart: the last half hour

export const PAGE = 100;
export const partitionQuery = { offset: 0, topic: "", order: "partition" };
const partitionLag = { topic: null, partition: null, samples: null };

export const statusUrl = () => `/api/v1/flows/${id}/status/?${statusQuery(partitionQuery, PAGE)}`;

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
  const state = pagerState(page);
  document.getElementById("partitions-range").textContent = state.range;
  document.getElementById("partitions-prev").disabled = !state.prev;
  document.getElementById("partitions-next").disabled = !state.next;
}

export function partitions(page) {
  clear(document.getElementById("partitions"), partitionRows(page));
  markSelected();
  pager(page);
}

function partitionChart() {
  const node = document.getElementById("chart-partition-lag");
  const range = axisRange({ minutes: PARTITION_MINUTES }, partitionLag.samples);
  chart(node, partitionLag.samples, "lag", "chart-lag", range, "No data");
}
onThemeChange(() => {
  if (partitionLag.samples) partitionChart();
});

export async function showPartitionLag() {
  if (partitionLag.topic === null) return;
  const q = new URLSearchParams({
    topic: partitionLag.topic,
    partition: partitionLag.partition,
    minutes: PARTITION_MINUTES,
  });
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

export function openPartition(topic, partition) {
  Object.assign(partitionLag, { topic, partition, samples: null });
  document.getElementById("partition-lag-name").textContent = `${topic}-${partition}`;
  document.getElementById("partition-lag").hidden = false;
  markSelected();
  showPartitionLag().catch((error) =>
    clear(document.getElementById("chart-partition-lag"), alert("error", error.message)),
  );
}

export function closePartition() {
  Object.assign(partitionLag, { topic: null, partition: null, samples: null });
  document.getElementById("partition-lag").hidden = true;
  markSelected();
}
