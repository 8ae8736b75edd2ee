// The flow status (GET /api/v1/flows/<id>/status/: FlowStatus, TaskStatus and PartitionStatus in /api/schema/)
// has every documented field on every task and partition; where a value is unknown it is null, not missing.
import { alert, badge, clear, el, ms, number, table } from "../dom.js";
import { statusErrors, tasksTile, whereText } from "./format.js";
import { setTile } from "./page.js";
import { partitions } from "./partitions.js";

// An unplaced task (no worker has a free slot) says so in its state and names the reason.
function stateBadge(task) {
  return task.placement === "unplaced" ? badge("UNPLACED") : badge(task.state);
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

export function tasks(status) {
  clear(document.getElementById("tasks"), taskRows(status));
  partitions(status.partitions);
  const unplaced = status.tasks.filter((t) => t.placement === "unplaced");
  clear(
    document.getElementById("errors"),
    statusErrors(status).map((e) => alert("error", e)),
    unplaced.map((t) =>
      alert(
        "error",
        `task ${t.task_id} is not placed: ${t.unplaced_reason}. Add a worker or raise MIRRORPLANE_WORKER_SLOTS.`,
      ),
    ),
  );
  const tile = tasksTile(status);
  setTile("tasks", tile.value, tile.sub);
  document.getElementById("pause")?.toggleAttribute("hidden", status.paused);
  document.getElementById("resume")?.toggleAttribute("hidden", !status.paused);
}
