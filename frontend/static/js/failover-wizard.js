// /failover/<id>/: the wizard. All state lives in the database; this page only renders it and runs steps,
// so a reload (or another browser) resumes exactly where the failover stands.
import { get, post } from "./api.js";
import { alert, badge, clear, el, when } from "./dom.js";
import * as panels from "./failover-steps.js";

const root = document.getElementById("wizard");
const id = root.dataset.id;
const operator = root.dataset.operator === "1";
const POLL_MS = 2000;
let busy = false;
let timer = null;

function stepper(f) {
  clear(document.getElementById("stepper"), f.stepper.map((s) => el("li", { class: s.state, "data-step": s.step, title: s.label }, s.label)));
}

function log(f) {
  const order = f.stepper.map((s) => s.step).concat(["abort"]);
  const entries = order.filter((s) => f.steps[s] && !f.steps[s].skipped);
  clear(document.getElementById("log"), entries.length ? entries.map((s) => el("details", {},
    el("summary", {}, `${s} `, el("span", { class: "faint" }, `${f.steps[s].by || ""} · ${when(f.steps[s].at)}${f.steps[s].complete ? "" : " · not complete"}`)),
    el("pre", {}, JSON.stringify({ inputs: f.steps[s].inputs, result: f.steps[s].result }, null, 2)))) : el("p", { class: "muted" }, "Nothing yet."));
}

function render(f) {
  const mode = { planned: "Planned", unplanned: "Unplanned", failback: "Failback" }[f.mode];
  document.getElementById("wizard-title").textContent = `${mode} failover ${f.source} → ${f.target}`;
  clear(document.getElementById("wizard-status"), badge(f.status, f.status === "active" ? "in progress" : f.status), f.dry_run ? badge("info", "dry run") : null);
  document.getElementById("abort")?.toggleAttribute("hidden", f.status !== "active");
  stepper(f);
  log(f);
  const step = f.status === "completed" ? "done" : f.step;
  const panel = panels[step] || (() => [el("p", {}, step)]);
  const title = f.stepper.find((s) => s.step === step)?.label || "Done";
  const body = f.status === "aborted" ? [alert("warn", `Aborted at step ${f.step}. Nothing was undone.`)] : panel(f, run, operator && f.status === "active");
  clear(document.getElementById("panel"), el("h2", { "data-current": step }, title), body);
  schedule(f);
}

// Drain is polled; a checkpoint that waits for replication is retried.
function schedule(f) {
  clearTimeout(timer);
  if (!operator || f.status !== "active") return;
  const waiting = f.step === "drain" || (f.step === "checkpoint" && (f.steps.checkpoint || {}).result?.waiting);
  if (waiting) timer = setTimeout(() => run(f.step, {}), POLL_MS);
}

async function run(step, inputs) {
  if (busy) return;
  busy = true;
  for (const b of document.querySelectorAll("#panel button")) b.disabled = true;
  try {
    render(await post(`/api/v1/failovers/${id}/${step}/`, inputs));
  } catch (error) {
    document.getElementById("panel").append(alert("error", error.message));
    if (error.status === 409) render(await get(`/api/v1/failovers/${id}/`));
  } finally {
    busy = false;
    for (const b of document.querySelectorAll("#panel button")) b.disabled = false;
  }
}

document.getElementById("abort")?.addEventListener("click", async () => {
  const reason = window.prompt("Abort this failover? Nothing done so far is undone. Reason:");
  if (reason === null) return;
  render(await post(`/api/v1/failovers/${id}/abort/`, { reason }));
});

get(`/api/v1/failovers/${id}/`).then(render).catch((error) => clear(document.getElementById("panel"), alert("error", error.message)));
