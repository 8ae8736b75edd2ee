// /flows/import/: a MirrorMaker 2 properties file in, clusters and flows created or changed (all or nothing).
// Preview is a dry run: what each cluster and flow would become, nothing written. Import after a preview of the
// same text sends the preview's digest, so it applies exactly what was shown or nothing (409).
// "Take over from MM2" imports the flows paused and follows the job that seeds their start positions from MM2's
// committed offsets, then shows, per partition, MM2's committed offset and where the flow starts.
import { api, ApiError } from "./api.js";
import { showErrors, clearErrors } from "./forms.js";
import { alert, badge, clear, el, table } from "./dom.js";
import { follow, progress } from "./jobs.js";

const form = document.getElementById("import-form");
const text = document.getElementById("f-properties");
const result = document.getElementById("result");
const takeover = document.getElementById("f-takeover");
const takeoverBox = document.getElementById("takeover");
const OUTCOME_BADGE = { created: "healthy", changed: "lagging", unchanged: "outline" };
let previewed = null; // {text, digest} of the last preview

const plural = (n, noun) => `${n} ${noun}${n === 1 ? "" : "s"}`;

// "2 clusters: 1 created, 1 changed, 0 unchanged"
function tally(counts, noun) {
  const total = counts.created + counts.changed + counts.unchanged;
  return `${plural(total, noun)}: ${counts.created} created, ${counts.changed} changed, ${counts.unchanged} unchanged`;
}

function shown(value) {
  if (value === null || value === undefined) return "–";
  if (Array.isArray(value)) return value.join(", ") || "(none)";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

function changeList(item) {
  const lines = item.changes.map((c) =>
    el(
      "li",
      {},
      el("code", {}, c.property),
      ": ",
      item.outcome === "created" ? "" : [el("span", { class: "old" }, shown(c.old)), " → "],
      el("span", { class: "new" }, shown(c.new)),
    ),
  );
  const notes = item.notes.map((note) => el("li", { class: "muted" }, note));
  return lines.length || notes.length ? el("ul", { class: "diff" }, lines, notes) : el("span", { class: "muted" }, "–");
}

function itemRow(item, links) {
  const href = links[`${item.kind}:${item.name}`];
  return el(
    "tr",
    { "data-item": `${item.kind}:${item.name}`, "data-outcome": item.outcome },
    el(
      "td",
      {},
      el("span", { class: "muted" }, `${item.kind} `),
      el("span", { class: "mono" }, href ? el("a", { href }, item.name) : item.name),
    ),
    el("td", {}, badge(OUTCOME_BADGE[item.outcome], item.outcome)),
    el("td", {}, changeList(item)),
  );
}

function render(answer, kind, headline, after = "") {
  const links = {};
  for (const c of answer.clusters) links[`cluster:${c.alias}`] = `/clusters/${c.id}/`;
  for (const f of answer.flows) links[`flow:${f.name}`] = `/flows/${f.id}/`;
  const summary = `${headline} ${tally(answer.counts.clusters, "cluster")}; ${tally(answer.counts.flows, "flow")}.${after}`;
  // The file's MM2 or Connect keys that change nothing here, each with its line and why.
  const ignored = answer.ignored.length
    ? el(
        "ul",
        { class: "problems muted", "data-ignored": "" },
        answer.ignored.map((note) => el("li", {}, note)),
      )
    : null;
  clear(
    result,
    alert(kind, summary),
    ignored,
    el(
      "div",
      { class: "scroll" },
      table(
        ["Cluster or flow", "Outcome", "Settings (old → new)"],
        answer.items.map((item) => itemRow(item, links)),
      ),
    ),
  );
}

function refused(error, what) {
  // An import is all or nothing: a refused file must not leave an earlier result on show.
  clear(result, alert("error", what));
  clear(takeoverBox);
  if (error instanceof ApiError && error.status === 400 && typeof error.data === "object") {
    showErrors(form, error.data);
    const problems = error.data.properties;
    const box = form.querySelector('[data-errors-for="properties"]');
    // One line per problem: a file is fixed in one pass.
    if (Array.isArray(problems) && box)
      clear(
        box,
        el(
          "ul",
          { class: "problems" },
          problems.map((p) => el("li", {}, p)),
        ),
      );
  } else showErrors(form, { detail: error.message });
}

function takeoverRows(flows) {
  return flows.flatMap((flow) =>
    flow.partitions.map((p) =>
      el(
        "tr",
        { "data-partition": `${flow.flow}:${p.topic}-${p.partition}` },
        el("td", { class: "mono" }, flow.flow),
        el("td", { class: "mono" }, `${p.topic}-${p.partition}`),
        el("td", { class: "mono" }, p.remote_topic),
        el("td", { class: "num" }, String(p.committed)),
        el("td", { class: "num" }, String(p.start)),
        el("td", { class: "muted" }, p.note),
      ),
    ),
  );
}

function showTakeover(job) {
  if (job.state === "failed") {
    clear(takeoverBox, alert("error", job.error)); // the job names the flow, "not taken over from MM2", and why
    return;
  }
  if (job.state !== "succeeded") {
    clear(takeoverBox, alert("info", `Taking over from MM2: ${progress(job)}`));
    return;
  }
  const flows = job.result.flows;
  const count = flows.reduce((n, flow) => n + flow.taken_over, 0);
  clear(
    takeoverBox,
    alert("ok", `Taken over from MM2: ${plural(count, "partition")}; the flows run from these positions.`),
    el(
      "div",
      { class: "scroll" },
      table(["Flow", "Source partition", "Remote topic", "MM2 committed", "Starts at", "How"], takeoverRows(flows), {
        empty: "MM2 committed no offsets: the flows start where a new flow starts.",
      }),
    ),
  );
}

async function preview() {
  clearErrors(form);
  const sent = text.value;
  try {
    const answer = await api("POST", `/api/v1/flows/import/?dry_run=true${takeover.checked ? "&takeover=true" : ""}`, {
      properties: sent,
    });
    previewed = { text: sent, digest: answer.digest };
    render(answer, "info", "Preview:", " Nothing is written until Import, which applies exactly this.");
  } catch (error) {
    previewed = null;
    refused(error, "Nothing would be imported.");
  }
}

async function apply(event) {
  event.preventDefault();
  clearErrors(form);
  const sent = text.value;
  const expect = previewed && previewed.text === sent ? `expect=${previewed.digest}` : "";
  try {
    const query = [expect, takeover.checked ? "takeover=true" : ""].filter(Boolean).join("&");
    const answer = await api("POST", `/api/v1/flows/import/${query ? `?${query}` : ""}`, { properties: sent });
    previewed = null;
    render(answer, "ok", "Imported", answer.takeover_job ? " The flows wait paused until the takeover ends." : "");
    clear(takeoverBox);
    if (answer.takeover_job) follow(answer.takeover_job, { onState: showTakeover });
  } catch (error) {
    if (error instanceof ApiError && error.status === 409)
      refused(error, "Nothing was imported: the clusters or flows changed since the preview. Preview again.");
    else refused(error, "Nothing was imported.");
  }
}

document.getElementById("file").addEventListener("change", async (event) => {
  const file = event.target.files[0];
  if (file) text.value = await file.text();
});
document.getElementById("preview").addEventListener("click", preview);
form.addEventListener("submit", apply);
