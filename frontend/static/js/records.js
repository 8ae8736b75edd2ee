// /flows/<id>/records/: a source partition's records beside their copies in the remote topic, read-only
// (GET /api/v1/flows/<id>/records/). The topics are the source topics the cluster browser says this flow
// replicates. Each row says where its copy is and how that is known; "Find on target" asks for one record alone
// (GET .../records/find/). A viewer's answer has sizes and header names but no bytes: the cells say so.
import { get, latest } from "./api.js";
import { alert, clear, el, table } from "./dom.js";
import { bytes, matchText, parseTime, stamp } from "./records-format.js";

const root = document.getElementById("records");
const flowId = root.dataset.id;
const base = `/api/v1/flows/${flowId}/records/`;
const box = (id) => document.getElementById(id);
const begin = latest();
let lastQuery = null;

// One key, value or header value: its rendering, or its size alone when the role may not see it.
function shown(rendered, render) {
  if (rendered === null || rendered === undefined) return el("span", { class: "faint" }, "null");
  if (rendered.shown === null) return el("span", { class: "muted" }, bytes(rendered.size));
  const notes = [];
  if (rendered.truncated) notes.push(`first ${rendered.shown.length.toLocaleString("en-US")} characters shown`);
  if (rendered.format !== render) notes.push(`shown as ${rendered.format}`);
  return el(
    "div",
    { class: "record-bytes" },
    el("pre", { class: "mono" }, rendered.shown),
    el("span", { class: "faint" }, [bytes(rendered.size), ...notes].join(" · ")),
  );
}

function headers(list, render) {
  if (!list.length) return el("span", { class: "faint" }, "none");
  return el(
    "div",
    {},
    list.map((h) =>
      el("div", { class: "record-header" }, el("span", { class: "mono" }, `${h.name}: `), shown(h.value, render)),
    ),
  );
}

function side(record, render, which) {
  if (!record) return [el("td", { colspan: 5, class: "muted", "data-side": which }, "no copy shown")];
  return [
    el("td", { class: "num", "data-side": which, "data-field": "offset" }, record.offset),
    el("td", { class: "nowrap" }, stamp(record.timestamp)),
    el("td", { "data-side": which, "data-field": "key" }, shown(record.key, render)),
    el("td", { "data-side": which, "data-field": "value" }, shown(record.value, render)),
    el("td", {}, headers(record.headers, render)),
  ];
}

async function find(topic, partition, offset, cell) {
  clear(cell, el("span", { class: "muted" }, "Finding…"));
  try {
    const found = await get(`${base}find/?${new URLSearchParams({ topic, partition, offset })}`);
    clear(cell, el("strong", {}, matchText(found)), el("div", { class: "faint" }, found.reason));
  } catch (error) {
    clear(cell, alert("error", error.message));
  }
}

function rows(found) {
  return found.records.map((row) => {
    const answer = el(
      "td",
      { class: "record-match", "data-field": "match" },
      el("strong", {}, matchText(row.match)),
      el("div", { class: "faint" }, row.match.reason),
    );
    const offset = row.source.offset;
    const button = el(
      "button",
      { class: "btn", type: "button", onclick: () => find(found.topic, found.partition, offset, answer) },
      "Find on target",
    );
    return el(
      "tr",
      { "data-offset": offset },
      side(row.source, found.render, "source"),
      side(row.target, found.render, "target"),
      answer,
      el("td", {}, button),
    );
  });
}

const HEADS = ["Offset", "Timestamp", "Key", "Value", "Headers"];

function render(found) {
  const heads = [
    ...HEADS.map((h) => ({ label: `Source ${h.toLowerCase()}`, num: h === "Offset" })),
    ...HEADS.map((h) => ({ label: `Target ${h.toLowerCase()}`, num: h === "Offset" })),
    "Copy",
    "",
  ];
  const s = found.source;
  const t = found.target;
  clear(
    box("records-status"),
    el(
      "p",
      { class: "muted" },
      `${found.topic} [${found.partition}] offsets ${s.start_offset}..${s.end_offset - 1} → ` +
        `${found.remote_topic} [${found.partition}] offsets ${t.start_offset}..${t.end_offset - 1}`,
    ),
  );
  const grid = table(heads, rows(found), { empty: "No records from there: the partition ends first." });
  grid.classList.add("compact");
  clear(box("records-table"), grid);
  box("records-more").hidden = found.next_offset === null || found.next_offset >= s.end_offset;
}

async function read(query) {
  const current = begin();
  clear(box("records-status"), el("p", { class: "muted" }, "Reading…"));
  try {
    const found = await get(`${base}?${new URLSearchParams(query)}`);
    if (!current()) return;
    render(found);
    const next = { ...query, offset: found.next_offset };
    delete next.timestamp; // the next page goes on from an offset, whatever the first began from
    lastQuery = found.next_offset === null ? null : next;
  } catch (error) {
    if (!current()) return;
    const fields = error.data && typeof error.data === "object" && !error.data.detail ? error.data : null;
    const text = fields
      ? Object.entries(fields)
          .map(([k, v]) => `${k}: ${[].concat(v).join(" ")}`)
          .join("; ")
      : error.message;
    clear(box("records-status"), alert("error", text));
  }
}

function query() {
  const q = {
    topic: box("records-topic").value,
    partition: box("records-partition").value,
    limit: box("records-limit").value,
    render: box("records-render").value,
  };
  if (box("records-from").value === "timestamp") {
    const ms = parseTime(box("records-time").value);
    if (ms === null) return null;
    q.timestamp = ms;
  } else {
    q.offset = box("records-offset").value || "0";
  }
  return q;
}

function partitions(count) {
  clear(
    box("records-partition"),
    Array.from({ length: count }, (_, p) => el("option", { value: p }, p)),
  );
}

async function topics() {
  const page = await get(`/api/v1/clusters/${root.dataset.source}/browse/topics/?limit=1000`);
  const mine = page.results.filter((t) => t.flows.some((f) => String(f.id) === flowId && f.role === "source"));
  const select = box("records-topic");
  clear(
    select,
    mine.map((t) => el("option", { value: t.topic, "data-partitions": t.partitions }, t.topic)),
  );
  if (!mine.length)
    clear(box("records-status"), alert("info", "No topic of the source cluster is replicated by this flow."));
  partitions(mine.length ? mine[0].partitions : 0);
}

box("records-topic").addEventListener("change", (event) => {
  const chosen = event.target.selectedOptions[0];
  partitions(chosen ? Number(chosen.dataset.partitions) : 0);
});
box("records-from").addEventListener("change", (event) => {
  const byTime = event.target.value === "timestamp";
  box("records-offset-field").hidden = byTime;
  box("records-time-field").hidden = !byTime;
});
box("records-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const q = query();
  if (q === null) {
    clear(box("records-status"), alert("error", "time: give it as YYYY-MM-DD HH:MM or YYYY-MM-DD HH:MM:SS (24-hour)"));
    return;
  }
  read(q);
});
box("records-more").addEventListener("click", () => lastQuery && read(lastQuery));

topics().catch((error) => clear(box("records-status"), alert("error", error.message)));
