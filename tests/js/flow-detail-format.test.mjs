// The flow page's pure helpers (frontend/static/js/flow-detail/format.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  cellText,
  columns,
  fieldErrors,
  figures,
  pagerState,
  runBadge,
  sections,
  statusErrors,
  statusQuery,
  tasksTile,
  whereText,
  windowText,
  withGaps,
} from "../../frontend/static/js/flow-detail/format.js";

const MINUTE = 60 * 1000;
const NOW = Date.parse("2026-11-24T12:00:00Z");
const at = (minutesAgo) => new Date(NOW - minutesAgo * MINUTE).toISOString();

test("a pause of over three usual intervals breaks the line with a null in its middle", () => {
  const samples = [0, 1, 2, 10, 11].map((m, i) => ({ at: at(11 - m), lag: i * 10 }));
  const { x, y, at: index } = withGaps(samples, "lag");
  assert.deepEqual(y, [0, 10, 20, null, 30, 40]);
  assert.deepEqual(index, [0, 1, 2, null, 3, 4]); // each point's sample, for its hover text
  assert.equal(x[3], at(11 - 6)); // halfway between minute 2 and minute 10
  assert.deepEqual(withGaps(samples.slice(0, 3), "lag").y, [0, 10, 20]);
  assert.deepEqual(withGaps([], "lag"), { x: [], y: [], at: [] });
});

test("a task says where it runs or why it does not", () => {
  assert.equal(whereText({ worker: "w-1", placement: "running" }), "on w-1");
  assert.equal(whereText({ worker: null, placement: "unplaced" }), "not placed: no worker has a free slot");
  assert.equal(whereText({ worker: null, placement: "idle", idle_reason: "paused" }), "paused");
  assert.equal(whereText({ worker: null, placement: "dispatched" }), "dispatched, starting");
  assert.equal(whereText({ worker: null, placement: "stopped" }), "not running");
});

const STATUS = {
  controller_error: "",
  provisioning: { provisioned: false, error: "" },
  tasks: [
    { task_id: 0, live: true, state: "RUNNING", placement: "running" },
    { task_id: 1, live: false, state: "FAILED", failure: "DATA_LOSS", last_error: "offsets 0-9 deleted" },
    { task_id: 2, live: false, state: "FAILED", failure: "ERROR", last_error: "timeout", placement: "unplaced" },
  ],
};

test("the status's errors name the controller, the provisioning and each failed task", () => {
  assert.deepEqual(statusErrors(STATUS), [
    "task 1 stopped on data loss: offsets 0-9 deleted",
    "task 2 failed: timeout",
  ]);
  const broken = { ...STATUS, controller_error: "no lease", provisioning: { provisioned: false, error: "denied" } };
  assert.deepEqual(statusErrors(broken).slice(0, 2), [
    "controller: no lease",
    "provisioning the flow's topics failed (retried): denied",
  ]);
});

test("the tasks tile counts running of assigned, the unplaced and a provisioning under way", () => {
  assert.deepEqual(tasksTile(STATUS), { value: "1 / 3", sub: "running / assigned · 1 unplaced · provisioning topics" });
  const settled = { ...STATUS, tasks: STATUS.tasks.slice(0, 1), provisioning: { provisioned: true, error: "" } };
  assert.deepEqual(tasksTile(settled), { value: "1 / 1", sub: "running / assigned" });
});

test("a page of partitions is asked for by offset, order and topic, and the pager says which way it moves", () => {
  assert.equal(statusQuery({ offset: 100, topic: "", order: "lag" }, 100), "limit=100&offset=100&order=lag");
  assert.equal(
    statusQuery({ offset: 0, topic: "or ders", order: "partition" }, 50),
    "limit=50&offset=0&order=partition&topic=or+ders",
  );
  const page = { offset: 100, count: 1250, results: new Array(100) };
  assert.deepEqual(pagerState(page), { range: "101–200 of 1,250", prev: true, next: true });
  assert.deepEqual(pagerState({ offset: 0, count: 0, results: [] }), {
    range: "0 partitions",
    prev: false,
    next: false,
  });
  assert.deepEqual(pagerState({ offset: 1200, count: 1250, results: new Array(50) }).next, false);
});

test("a report's figures list only those it has", () => {
  assert.equal(figures({}), "");
  assert.equal(
    figures({ facts: 12000, missing: 3, completeness_pct: null }),
    "12,000 facts · 3 missing · completeness n/a",
  );
  assert.equal(figures({ completeness_pct: 99.5, heartbeat_arrivals: 7 }), "99.5 % complete · 7 heartbeat arrivals");
});

test("a run's status maps to a health badge and a window without a start is the whole lake", () => {
  assert.deepEqual(["NO_DATA", "SUCCEEDED", "FAILED", "QUEUED", "RUNNING"].map(runBadge), [
    "lagging",
    "healthy",
    "failing",
    "starting",
    "starting",
  ]);
  assert.equal(windowText(null, null), "whole lake");
});

test("report rows group by section in first-seen order with the columns their rows have", () => {
  const rows = [
    { section: "links", flow: "a->b", link: "x", lag: 3 },
    { section: "gaps", flow: "a->b", topic: "orders", since: "2026-11-24T10:00:00Z" },
    { section: "links", flow: "a->b", link: "y", lag: null, note: "n" },
  ];
  const found = sections(rows);
  assert.deepEqual(
    found.map(([section, list]) => [section, list.length]),
    [
      ["links", 2],
      ["gaps", 1],
    ],
  );
  assert.deepEqual(columns(found[0][1]), [
    { key: "link", numeric: false },
    { key: "lag", numeric: true },
    { key: "note", numeric: false },
  ]);
});

test("a report cell shows numbers grouped, epoch ms and ISO times as dates, objects as JSON, nothing as a dash", () => {
  assert.equal(cellText(12345, "records"), "12,345");
  assert.equal(cellText(null, "lag"), "–");
  assert.equal(cellText(undefined, "lag"), "–");
  assert.equal(cellText({ a: 1 }, "extra"), '{"a":1}');
  assert.equal(cellText("orders", "topic"), "orders");
  assert.match(cellText(NOW, "last_heartbeat_ms"), /^24 Nov 2026, \d\d:00:00$/);
  assert.match(cellText("2026-11-24T12:00:00Z", "since"), /^24 Nov 2026, \d\d:00:00$/);
});

test("a refused run names each wrong field and why", () => {
  assert.equal(
    fieldErrors({ since: ["before the lake's retention"], options: { top: "must be positive" } }),
    "since: before the lake's retention; options: top must be positive",
  );
});
