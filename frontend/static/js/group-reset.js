// A consumer group's offsets reset, from its page in the cluster browser: a form (reset to the earliest or latest
// offset, a UTC time or an offset; every committed partition, a topic or one partition), the preview the API answers
// (per partition the committed offset, the new one, the records read again or skipped, the log's start and end),
// and, for operators and admins, the Confirm that writes exactly what the preview showed. The API refuses a group
// with members, or one whose offsets moved since the preview, and the panel shows why.
import { post, problem } from "./api.js";
import { alert, canOperate, clear, el, number, table } from "./dom.js";

const MODES = [
  ["earliest", "Earliest: each partition's log start"],
  ["latest", "Latest: skip what is not read yet"],
  ["timestamp", "Time: the first record at or after it"],
  ["offset", "Offset"],
];

// "2026-11-28 13:05" or "2026-11-28 13:05:30", read as UTC (24-hour), to the ISO instant the API takes; any other
// text goes to the API as typed, which names the field it cannot read.
const UTC_TIME = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(?::(\d{2}))?$/;

export function utcInstant(text) {
  const m = UTC_TIME.exec(text.trim());
  if (!m) return text.trim();
  return `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6] || "00"}Z`;
}

// The request body of the form's values: only the fields the mode needs, blanks left out.
export function resetBody({ to, topic = "", partition = "", timestamp = "", offset = "" }) {
  const body = { to };
  if (topic.trim()) body.topic = topic.trim();
  if (topic.trim() && String(partition).trim() !== "") body.partition = Number(partition);
  if (to === "timestamp") body.timestamp = utcInstant(timestamp);
  if (to === "offset") body.offset = String(offset).trim() === "" ? null : Number(offset);
  return body;
}

const records = (n) => `${number(n)} ${n === 1 ? "record" : "records"}`;

function field(label, control, hint) {
  return el(
    "label",
    { class: "field" },
    el("span", {}, label),
    control,
    hint ? el("small", { class: "muted" }, hint) : null,
  );
}

function previewTable(found) {
  const rows = found.partitions.map((r) =>
    el(
      "tr",
      { "data-partition": `${r.topic}-${r.partition}` },
      el("td", { class: "mono" }, `${r.topic}-${r.partition}`),
      el(
        "td",
        { class: "num" },
        r.current_offset === null ? el("span", { class: "faint" }, "none") : number(r.current_offset),
      ),
      el("td", { class: "num" }, number(r.new_offset)),
      el("td", { class: "num" }, number(r.reread)),
      el("td", { class: "num" }, number(r.skipped)),
      el("td", { class: "num" }, number(r.log_start)),
      el("td", { class: "num" }, number(r.log_end)),
    ),
  );
  const heads = [
    "Partition",
    { label: "Committed", num: true },
    { label: "New offset", num: true },
    { label: "Read again", num: true },
    { label: "Skipped", num: true },
    { label: "Log start", num: true },
    { label: "Log end", num: true },
  ];
  return table(heads, rows, { empty: "No partition to reset." });
}

function writtenTable(written) {
  const rows = written.partitions.map((r) =>
    el(
      "tr",
      { "data-partition": `${r.topic}-${r.partition}` },
      el("td", { class: "mono" }, `${r.topic}-${r.partition}`),
      el("td", { class: "num" }, r.old_offset === null ? "none" : number(r.old_offset)),
      el("td", { class: "num" }, number(r.new_offset)),
    ),
  );
  return table(["Partition", { label: "Was", num: true }, { label: "Now", num: true }], rows);
}

// The panel for one group; `topics` are those its offsets name, offered in the topic box. `onApplied` runs after a
// reset was written (the page reads the group again).
export function resetPanel(clusterId, group, topics, onApplied = () => {}) {
  const url = `/api/v1/clusters/${clusterId}/groups/${encodeURIComponent(group)}/reset-offsets/`;
  const mode = el(
    "select",
    { id: "reset-to", name: "to" },
    MODES.map(([value, label]) => el("option", { value }, label)),
  );
  const topic = el("input", {
    id: "reset-topic",
    name: "topic",
    list: "reset-topics",
    placeholder: "every committed partition",
  });
  const partition = el("input", {
    id: "reset-partition",
    name: "partition",
    type: "number",
    min: "0",
    placeholder: "all",
  });
  const timestamp = el("input", { id: "reset-timestamp", name: "timestamp", placeholder: "YYYY-MM-DD HH:MM:SS" });
  const offset = el("input", { id: "reset-offset", name: "offset", type: "number", min: "0" });
  const whenField = field("Time (UTC, 24-hour)", timestamp, "e.g. 2026-11-28 13:05");
  const offsetField = field("Offset", offset);
  const result = el("div", { id: "reset-result" });
  let previewed = null;

  const values = () => ({
    to: mode.value,
    topic: topic.value,
    partition: partition.value,
    timestamp: timestamp.value,
    offset: offset.value,
  });
  function sync() {
    whenField.hidden = mode.value !== "timestamp";
    offsetField.hidden = mode.value !== "offset";
    previewed = null; // what was previewed is no longer what the form says
    clear(result);
  }

  async function confirm(body) {
    clear(result, el("div", { class: "empty" }, "Writing…"));
    try {
      const written = await post(url, { ...body, preview: previewed });
      previewed = null;
      clear(result, alert("ok", `Offsets of ${group} reset.`), writtenTable(written));
      onApplied(written);
    } catch (error) {
      clear(result, alert("error", problem(error)));
    }
  }

  async function preview(event) {
    event.preventDefault();
    const body = resetBody(values());
    clear(result, el("div", { class: "empty" }, "Reading the group…"));
    try {
      const found = await post(`${url}preview/`, body);
      previewed = found.preview;
      const totals = `${records(found.reread)} read again, ${records(found.skipped)} skipped.`;
      const action = canOperate()
        ? el(
            "button",
            { class: "btn primary", type: "button", id: "reset-confirm", onclick: () => confirm(body) },
            "Confirm reset",
          )
        : el("span", { class: "muted" }, "Only operators and admins reset offsets.");
      clear(
        result,
        el("p", { id: "reset-totals" }, totals),
        previewTable(found),
        el("div", { class: "actions" }, action),
      );
    } catch (error) {
      clear(result, alert("error", problem(error)));
    }
  }

  for (const control of [mode, topic, partition, timestamp, offset]) control.addEventListener("input", sync);
  sync();
  const form = el(
    "form",
    { class: "reset-form", onsubmit: preview },
    el(
      "datalist",
      { id: "reset-topics" },
      topics.map((t) => el("option", { value: t })),
    ),
    field("Reset to", mode),
    field("Topic", topic, "blank: every partition the group committed"),
    field("Partition", partition, "blank: all of the topic's"),
    whenField,
    offsetField,
    el("div", { class: "actions" }, el("button", { class: "btn", type: "submit", id: "reset-preview" }, "Preview")),
  );
  const panel = el(
    "section",
    { class: "card", id: "group-reset", hidden: true },
    el("p", { class: "muted" }, "Only an EMPTY group (no members) can be reset. Nothing is written until you confirm."),
    form,
    result,
  );
  const open = el(
    "button",
    { class: "btn", type: "button", id: "reset-open", onclick: () => (panel.hidden = !panel.hidden) },
    "Reset offsets",
  );
  return el("div", { class: "group-reset" }, el("div", { class: "actions" }, open), panel);
}
