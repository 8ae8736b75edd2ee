// /flows/new/ and /flows/<id>/edit/: the flow form, with a live preview of the topics it would replicate.
import { api, ApiError, latest } from "./api.js";
import { collect, fill, showErrors, submit } from "./forms.js";
import { alert, banner, clear, el, table } from "./dom.js";
import { progress, runJob } from "./jobs.js";

const form = document.getElementById("flow-form");
const id = form.dataset.id;
const PREVIEW_FIELDS = [
  "source",
  "target",
  "topics",
  "topics_exclude",
  "replication_policy_class",
  "replication_policy_separator",
];
let timer = null;
const begin = latest(); // a newer edit's preview replaces an older one's

function topicRow(row) {
  return el(
    "tr",
    { class: row.replicated ? "" : "off", title: row.reason },
    el("td", { class: "mono" }, row.topic),
    row.replicated
      ? el("td", { class: "mono" }, row.remote_topic)
      : el("td", { class: "why" }, `not replicated: ${row.reason}`),
  );
}

function renderLoops(answer) {
  const box = document.getElementById("loops");
  const notes = answer.loops.map((loop) =>
    alert(
      "warn",
      `Closes the loop ${loop}. ${answer.refused ? "" : "The replication policy detects it: no topic is sent back to where it came from."}`,
    ),
  );
  if (answer.refused) notes.unshift(alert("error", `Refused: ${answer.refused}`));
  clear(box, notes);
}

function renderPreview(answer) {
  renderLoops(answer);
  const count = document.getElementById("preview-count");
  const box = document.getElementById("preview");
  if (answer.error) {
    count.textContent = "";
    clear(box, alert("error", answer.error));
    return;
  }
  count.textContent = `${answer.replicated} of ${answer.total} source topics`;
  const rows = answer.topics.map(topicRow);
  const topics = el(
    "div",
    { class: "scroll" },
    table(["Source topic", "Replicated as"], rows, { empty: "The source cluster has no topics yet." }),
  );
  clear(box, answer.warning ? [alert("warn", answer.warning), topics] : topics);
}

async function refresh() {
  const current = begin();
  const values = collect(form);
  const body = Object.fromEntries(PREVIEW_FIELDS.map((name) => [name, values[name]]));
  // Source and target are disabled (unchangeable) when editing, so collect() leaves them out.
  body.source = form.elements.source.value;
  body.target = form.elements.target.value;
  if (id) body.flow = Number(id);
  if (!body.source || !body.target) return;
  // The preview is a background job (listing a large cluster's topics takes seconds): started, then polled. A
  // newer edit cancels the wait; one preview per user runs at a time, so ours starts when the previous one ends.
  const count = document.getElementById("preview-count");
  const box = document.getElementById("preview");
  const cancelled = () => !current();
  const hooks = {
    cancelled,
    again: true,
    onState: (job) => {
      if (!cancelled() && !["succeeded", "failed"].includes(job.state))
        count.textContent = `Listing source topics. ${progress(job)}`;
    },
    onError: (error, delay) => banner(box, "error", `${error.message} Retrying in ${Math.round(delay / 1000)} s.`),
    onRecover: () => banner(box, "error", null),
  };
  try {
    const job = await runJob("/api/v1/flow-preview/", body, hooks);
    if (job === null || cancelled()) return;
    if (job.state === "succeeded") renderPreview(job.result);
    else {
      count.textContent = "";
      clear(document.getElementById("loops"));
      clear(box, alert("warn", `No preview: ${job.error}`));
    }
  } catch (error) {
    if (cancelled()) return;
    const text =
      error instanceof ApiError && error.status === 400
        ? Object.entries(error.data)
            .map(([k, v]) => `${k}: ${[].concat(v).join(" ")}`)
            .join("; ")
        : error.message;
    count.textContent = "";
    clear(document.getElementById("loops"));
    clear(box, alert("warn", `No preview: ${text}`));
  }
}

function schedule() {
  clearTimeout(timer);
  timer = setTimeout(refresh, 350);
}

async function remove() {
  if (!window.confirm("Delete this flow? Its tasks stop; topics already replicated stay in the target.")) return;
  try {
    await api("DELETE", `/api/v1/flows/${id}/`);
    window.location.assign("/flows/");
  } catch (error) {
    showErrors(form, { detail: error.message });
  }
}

async function init() {
  if (id) {
    fill(form, await api("GET", `/api/v1/flows/${id}/`));
    form.elements.source.disabled = true;
    form.elements.target.disabled = true;
  } else if (form.elements.target.options.length > 1) {
    form.elements.target.selectedIndex = 1;
  }
  for (const name of PREVIEW_FIELDS) form.elements[name].addEventListener("input", schedule);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    submit(form, id ? "PATCH" : "POST", id ? `/api/v1/flows/${id}/` : "/api/v1/flows/", (flow) =>
      window.location.assign(`/flows/${flow.id}/`),
    );
  });
  document.getElementById("delete")?.addEventListener("click", remove);
  refresh();
}

init();
