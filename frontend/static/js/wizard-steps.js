// The wizard's step list as the server's step table gives it (the page's #wizard-steps JSON: name, label, rerun,
// stops_producers), and the decisions the wizard takes from it. Pure: no DOM but `readSteps`.

export function readSteps(doc = document) {
  return JSON.parse(doc.getElementById("wizard-steps").textContent);
}

export const stepNamed = (steps, name) => steps.find((s) => s.name === name) || null;

export const jobActive = (f) => ["queued", "running"].includes(f.job.state) && !f.job.expired;

// The step the failover stands at runs again without a click: "always" until it completes (the drain),
// "waiting" while its last result waits (a checkpoint waiting for replication).
export function rerunsNow(f, steps) {
  const rerun = stepNamed(steps, f.step)?.rerun;
  return rerun === "always" || (rerun === "waiting" && Boolean(f.steps[f.step]?.result.waiting));
}

// What the poll loop does next: `{delay, rerun}`, delay in ms (null: stop), rerun the step to start again.
export function nextTick(f, steps, { operator, refused, pollMs, jobPollMs }) {
  if (f.status !== "active") return { delay: null, rerun: null };
  if (jobActive(f)) return { delay: jobPollMs, rerun: null };
  if (!operator) return { delay: pollMs, rerun: null };
  if (rerunsNow(f, steps) && !refused) return { delay: pollMs, rerun: f.step };
  return { delay: null, rerun: null };
}

// The step log: every step that ran (not a skipped one), in the wizard's order, then the abort.
export function loggedSteps(f, steps) {
  return [...steps.map((s) => s.name), "abort"].filter((name) => name in f.steps && !f.steps[name].skipped);
}

// A step's state in the log. The pre-flight is complete as soon as every check passes (nothing failed, every
// warning acknowledged); Continue then only moves on.
export function logState(entry, step) {
  if (entry.complete) return "";
  const r = entry.result;
  if (step === "preflight" && !r.failed.length && !r.unacknowledged.length) return " · complete";
  return " · not complete";
}

// The panel shown: the step the failover stands at, or "done" once it completed.
export const currentPanel = (f) => (f.status === "completed" ? "done" : f.step);

export const panelTitle = (steps, step) => stepNamed(steps, step)?.label || "Done";

// The demo's traffic switch goes into the panels that ask for the source's producers to stop, and into the last one
// (resuming after the failover warns first).
export const showsTraffic = (steps, step) => step === "done" || Boolean(stepNamed(steps, step)?.stops_producers);
