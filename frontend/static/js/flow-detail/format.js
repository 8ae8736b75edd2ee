// The flow page's pure helpers: what its sections compute from the API's answers before they touch the DOM.
import { number, timeSpan, when } from "../dom.js";

// Samples with a break (null) wherever the sampler took none for over three of its usual intervals (the flow or the
// sampler stopped): the line then stops there instead of sloping across time with no data. `at` gives each point's
// sample index (null for a break).
export function withGaps(samples, key) {
  const times = samples.map((s) => Date.parse(s.at));
  const steps = times
    .slice(1)
    .map((t, i) => t - times[i])
    .sort((a, b) => a - b);
  const usual = steps.length ? steps[Math.floor(steps.length / 2)] : 0;
  const x = [],
    y = [],
    at = [];
  samples.forEach((s, i) => {
    if (i > 0 && usual > 0 && times[i] - times[i - 1] > 3 * usual) {
      x.push(new Date((times[i] + times[i - 1]) / 2).toISOString());
      y.push(null);
      at.push(null);
    }
    x.push(s.at);
    y.push(s[key]);
    at.push(i);
  });
  return { x, y, at };
}

// Where a task runs, or why it does not.
export function whereText(task) {
  if (task.worker) return `on ${task.worker}`;
  if (task.placement === "unplaced") return "not placed: no worker has a free slot";
  if (task.placement === "idle") return task.idle_reason;
  return task.placement === "dispatched" ? "dispatched, starting" : "not running";
}

// The flow's errors over its tasks: the controller's, the topics' provisioning, each failed task's.
export function statusErrors(status) {
  const provisioning = status.provisioning;
  return [
    status.controller_error && `controller: ${status.controller_error}`,
    provisioning.error && `provisioning the flow's topics failed (retried): ${provisioning.error}`,
    ...status.tasks
      .filter((t) => t.state === "FAILED")
      .map(
        (t) => `task ${t.task_id} ${t.failure === "DATA_LOSS" ? "stopped on data loss" : "failed"}: ${t.last_error}`,
      ),
  ].filter(Boolean);
}

// The tasks tile: running of assigned, with the unplaced ones and a provisioning still under way.
export function tasksTile(status) {
  const live = status.tasks.filter((t) => t.live).length;
  const unplaced = status.tasks.filter((t) => t.placement === "unplaced").length;
  const provisioning = status.provisioning;
  const waiting = !provisioning.provisioned && !provisioning.error ? " · provisioning topics" : "";
  return {
    value: `${live} / ${status.tasks.length}`,
    sub: `running / assigned${unplaced ? ` · ${unplaced} unplaced` : ""}${waiting}`,
  };
}

// The status API's query for a page of partitions.
export function statusQuery({ offset, topic, order }, limit) {
  const q = new URLSearchParams({ limit, offset, order });
  if (topic) q.set("topic", topic);
  return q.toString();
}

// The partitions pager: the range shown and which buttons can move.
export function pagerState(page) {
  const last = Math.min(page.offset + page.results.length, page.count);
  return {
    range: page.count ? `${number(page.offset + 1)}–${number(last)} of ${number(page.count)}` : "0 partitions",
    prev: page.offset > 0,
    next: last < page.count,
  };
}

// A report's or run's figures, those it has, in one line.
export function figures(f) {
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

// A run's window, compactly and 24-hour (dom.js's timeSpan), or the whole lake when it has no start.
export function windowText(since, until) {
  return since ? timeSpan(since, until) : "whole lake";
}

// A run's status as a health badge's kind.
export function runBadge(status) {
  if (status === "NO_DATA") return "lagging";
  if (status === "SUCCEEDED") return "healthy";
  return status === "FAILED" ? "failing" : "starting";
}

// A report row's sections, in the order they first appear, each with its rows.
export function sections(rows) {
  const found = new Map();
  for (const row of rows) found.set(row.section, [...(found.get(row.section) || []), row]);
  return [...found];
}

// The columns of a section's rows (every key but section and flow), and whether one holds only numbers.
export function columns(list) {
  const keys = [...new Set(list.flatMap(Object.keys))].filter((k) => k !== "section" && k !== "flow");
  const numeric = (k) => list.every((row) => row[k] === undefined || row[k] === null || typeof row[k] === "number");
  return keys.map((key) => ({ key, numeric: numeric(key) }));
}

// A report cell: times (ISO strings such as an audit window's start, epoch ms named last_..._ms) as dates with
// 24-hour times, numbers grouped, objects as JSON, a missing value as a dash.
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/;
export function cellText(value, key) {
  if (typeof value === "number") return key.startsWith("last_") && key.endsWith("_ms") ? when(value) : number(value);
  if (value === undefined || value === null) return "–";
  if (typeof value === "object") return JSON.stringify(value);
  return ISO_TIME.test(value) ? when(value) : String(value);
}

// Why a run was refused, from the API's 400 body: each field that is wrong and why, in one line.
export function fieldErrors(data) {
  const text = (v) => (typeof v === "object" && !Array.isArray(v) ? Object.entries(v).map(([k, w]) => `${k} ${w}`) : v);
  return Object.entries(data)
    .map(([field, v]) => `${field}: ${[].concat(text(v)).join(" ")}`)
    .join("; ");
}
