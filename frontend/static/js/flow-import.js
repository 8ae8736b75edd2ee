// /flows/import/: a MirrorMaker 2 properties file in, clusters and flows created or changed (all or nothing).
// Preview is a dry run: what each cluster and flow would become, nothing written. Import after a preview of the
// same text sends the preview's digest, so it applies exactly what was shown or nothing (409).
import { api, ApiError } from "./api.js";
import { showErrors, clearErrors } from "./forms.js";
import { alert, badge, clear, el, table } from "./dom.js";

const form = document.getElementById("import-form");
const text = document.getElementById("f-properties");
const result = document.getElementById("result");
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

async function preview() {
  clearErrors(form);
  const sent = text.value;
  try {
    const answer = await api("POST", "/api/v1/flows/import/?dry_run=true", { properties: sent });
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
  const expect = previewed && previewed.text === sent ? `?expect=${previewed.digest}` : "";
  try {
    const answer = await api("POST", `/api/v1/flows/import/${expect}`, { properties: sent });
    previewed = null;
    render(answer, "ok", "Imported");
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
