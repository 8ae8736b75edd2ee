// /failover/<id>/: the wizard. All state lives in the database; this page only renders it and starts steps,
// so a reload (or another browser) resumes exactly where the failover stands.
//
// A step runs as a background job: its POST answers at once (202) and one poll loop reads the failover until the
// job has finished. The drain (and a checkpoint waiting for replication) is started again every POLL_MS. The
// loop survives errors: it retries with backoff, one banner names the current error, and a success clears it.
import { get, post, poller } from "./api.js";
import { alert, badge, banner, clear, el, when } from "./dom.js";
import * as panels from "./failover-steps.js";
import { mountDemoTraffic } from "./demo-traffic.js";
import {
  currentPanel,
  jobActive,
  loggedSteps,
  logState,
  nextTick,
  panelTitle,
  readSteps,
  showsTraffic,
} from "./wizard-steps.js";

const root = document.getElementById("wizard");
const id = root.dataset.id;
const operator = root.dataset.operator === "1";
const url = `/api/v1/failovers/${id}/`;
const steps = readSteps(); // the server's step table
const POLL_MS = 2000;
const JOB_POLL_MS = 1000;
const bannerBox = document.getElementById("wizard-banner");
let failover = null;
let pending = null; // {step, inputs}: a step to start on the next tick (a button, or the drain's poll)
let refusal = null; // the last 409/400 answer to a step, shown in the panel until the next step starts
let retryMs = null; // set while the loop is backing off after an error
let draft = null; // a drain threshold being typed: kept across the drain's re-renders
// The demo's traffic switch (hidden when no demo runs), one element moved into the panels that ask for the
// source's producers to stop (drain, fence) and into the last one (resuming after the failover warns first).
const demoTraffic = el("div", { class: "demo-traffic wizard-traffic", id: "wizard-demo-traffic", hidden: true });
demoTraffic.dataset.canOperate = operator ? "1" : "0";
demoTraffic.dataset.layout = "block";
let demoMounted = false;
// The step's own buttons, disabled while its job runs; the demo's switch stays usable (the drain's job runs often).
const STEP_BUTTONS = "#panel button:not(#demo-traffic-toggle)";

const loop = poller(tick, {
  baseMs: POLL_MS,
  onError(error, delay) {
    retryMs = delay;
    banner(bannerBox, "error", `${error.message} Retrying in ${Math.round(delay / 1000)} s.`);
    if (failover) render(failover);
  },
  onRecover() {
    retryMs = null;
    banner(bannerBox, "error", null);
  },
});

async function tick() {
  if (pending) {
    const { step, inputs } = pending;
    try {
      failover = await post(`${url}${step}/`, inputs);
      refusal = null;
    } catch (error) {
      if (error.status !== 409 && error.status !== 400) throw error; // network or server: retried, step kept
      // Busy (another request's job holds the step) is shown by the job line; anything else is a refusal.
      refusal = error.data?.job ? null : error.message;
      failover = error.status === 409 ? await get(url) : failover || (await get(url));
    }
    pending = null;
  } else {
    failover = await get(url);
  }
  render(failover);
  return next(failover);
}

// What the loop does next: follow a running job, start a step that runs again by itself, or stop.
function next(f) {
  const { delay, rerun } = nextTick(f, steps, {
    operator,
    refused: Boolean(refusal),
    pollMs: POLL_MS,
    jobPollMs: JOB_POLL_MS,
  });
  if (rerun) pending = { step: rerun, inputs: {} };
  return delay;
}

function run(step, inputs) {
  for (const b of document.querySelectorAll(STEP_BUTTONS)) b.disabled = true;
  pending = { step, inputs };
  refusal = null;
  loop.now();
}

function stepper(f) {
  clear(
    document.getElementById("stepper"),
    f.stepper.map((s) => el("li", { class: s.state, "data-step": s.step, title: s.label }, s.label)),
  );
}

function log(f) {
  const entries = loggedSteps(f, steps);
  clear(
    document.getElementById("log"),
    entries.length
      ? entries.map((s) =>
          el(
            "details",
            {},
            el(
              "summary",
              {},
              `${s} `,
              el("span", { class: "faint" }, `${f.steps[s].by} · ${when(f.steps[s].at)}${logState(f.steps[s], s)}`),
            ),
            el("pre", {}, JSON.stringify({ inputs: f.steps[s].inputs, result: f.steps[s].result }, null, 2)),
          ),
        )
      : el("p", { class: "muted" }, "Nothing yet."),
  );
}

// The job of the step the failover stands at: queued, running, failed or expired (a finished one says nothing).
function jobLine(f) {
  const j = f.job;
  if (!j.step || j.step !== f.step) return null;
  if (j.expired)
    return alert(
      "warn",
      `The ${j.step} job stopped answering (its claim expired ${when(j.expires_at)}): its worker may have died. Start the step again.`,
    );
  if (j.state === "queued")
    return el(
      "p",
      { class: "jobstate", "data-job": "queued" },
      badge("info", "queued"),
      ` ${j.step} is waiting for a worker…`,
    );
  if (j.state === "running")
    return el(
      "p",
      { class: "jobstate", "data-job": "running" },
      badge("info", "running"),
      ` ${j.step} running since ${when(j.started_at)}…`,
    );
  if (j.state === "failed") return alert("error", `The ${j.step} job failed: ${j.error}`);
  return null;
}

function render(f) {
  const mode = { planned: "Planned", unplanned: "Unplanned", failback: "Failback" }[f.mode];
  document.getElementById("wizard-title").textContent = `${mode} failover ${f.source} → ${f.target}`;
  clear(
    document.getElementById("wizard-status"),
    badge(f.status, f.status === "active" ? "in progress" : f.status),
    f.dry_run ? badge("info", "dry run") : null,
  );
  document.getElementById("abort")?.toggleAttribute("hidden", f.status !== "active");
  stepper(f);
  log(f);
  const step = currentPanel(f);
  const panel = panels[step] || (() => [el("p", {}, step)]);
  const title = panelTitle(steps, step);
  const context = {
    everyMs: POLL_MS,
    retryMs,
    setThreshold,
    draft,
    onDraft: (value) => {
      draft = value;
    },
    demoTraffic: showsTraffic(steps, step) ? demoTraffic : null,
  };
  const body =
    f.status === "aborted"
      ? [alert("warn", `Aborted at step ${f.step}. Nothing was undone.`)]
      : panel(f, run, operator && f.status === "active", context);
  const focused = document.activeElement?.id; // the drain re-renders while the operator may be typing
  clear(
    document.getElementById("panel"),
    el("h2", { "data-current": step }, title),
    f.status === "active" ? jobLine(f) : null,
    refusal ? alert("error", refusal) : null,
    body,
  );
  if (focused) document.getElementById(focused)?.focus();
  if (!demoMounted && demoTraffic.isConnected) {
    demoMounted = true;
    mountDemoTraffic(demoTraffic);
  }
  if (jobActive(f)) for (const b of document.querySelectorAll(STEP_BUTTONS)) b.disabled = true;
}

async function setThreshold(value) {
  draft = null;
  try {
    failover = await post(`${url}drain-threshold/`, { drain_threshold: Number(value) });
    refusal = null;
  } catch (error) {
    refusal = error.data?.drain_threshold?.[0] || error.message;
  }
  if (failover) render(failover);
  loop.now();
}

document.getElementById("abort")?.addEventListener("click", async () => {
  const reason = window.prompt("Abort this failover? Nothing done so far is undone. Reason:");
  if (reason === null) return;
  try {
    failover = await post(`${url}abort/`, { reason });
    refusal = null;
  } catch (error) {
    refusal = error.message;
  }
  if (failover) render(failover);
});

loop.now();
