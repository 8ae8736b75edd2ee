// The wizard's decisions from the server's step list (frontend/static/js/wizard-steps.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  currentPanel,
  jobActive,
  loggedSteps,
  logState,
  nextTick,
  panelTitle,
  rerunsNow,
  showsTraffic,
} from "../../frontend/static/js/wizard-steps.js";

// The shape failover/steps.py's as_json() gives (tests/controlplane/failover/test_step_table.py holds the server's).
const STEPS = [
  { name: "plan", label: "Plan", rerun: "", stops_producers: false },
  { name: "preflight", label: "Pre-flight", rerun: "", stops_producers: false },
  { name: "drain", label: "Drain", rerun: "always", stops_producers: true },
  { name: "fence", label: "Fence", rerun: "", stops_producers: true },
  { name: "checkpoint", label: "Final checkpoint", rerun: "waiting", stops_producers: false },
  { name: "apply", label: "Apply", rerun: "", stops_producers: false },
];
const IDLE = { state: "idle", expired: false };
const OPTIONS = { operator: true, refused: false, pollMs: 2000, jobPollMs: 1000 };
const failover = (step, steps = {}, job = IDLE, status = "active") => ({ step, steps, job, status });

test("the drain runs again until it completes, a checkpoint only while it waits", () => {
  assert.equal(rerunsNow(failover("drain"), STEPS), true);
  assert.equal(rerunsNow(failover("checkpoint"), STEPS), false);
  assert.equal(rerunsNow(failover("checkpoint", { checkpoint: { result: { waiting: true } } }), STEPS), true);
  assert.equal(rerunsNow(failover("checkpoint", { checkpoint: { result: { waiting: false } } }), STEPS), false);
  assert.equal(rerunsNow(failover("apply"), STEPS), false);
  assert.equal(rerunsNow(failover("unknown"), STEPS), false);
});

test("the loop follows a job, reruns a waiting step for an operator, polls for a viewer, stops when done", () => {
  const running = { state: "running", expired: false };
  assert.deepEqual(nextTick(failover("apply", {}, running), STEPS, OPTIONS), { delay: 1000, rerun: null });
  assert.deepEqual(nextTick(failover("drain"), STEPS, OPTIONS), { delay: 2000, rerun: "drain" });
  assert.deepEqual(nextTick(failover("drain"), STEPS, { ...OPTIONS, refused: true }), { delay: null, rerun: null });
  assert.deepEqual(nextTick(failover("drain"), STEPS, { ...OPTIONS, operator: false }), { delay: 2000, rerun: null });
  assert.deepEqual(nextTick(failover("apply"), STEPS, OPTIONS), { delay: null, rerun: null });
  assert.deepEqual(nextTick(failover("drain", {}, IDLE, "completed"), STEPS, OPTIONS), { delay: null, rerun: null });
});

test("an expired job is not active", () => {
  assert.equal(jobActive({ job: { state: "queued", expired: false } }), true);
  assert.equal(jobActive({ job: { state: "running", expired: true } }), false);
  assert.equal(jobActive({ job: { state: "succeeded", expired: false } }), false);
});

test("the log lists the steps that ran in the wizard's order, the abort last, a skipped drain not at all", () => {
  const ran = { abort: {}, fence: {}, plan: {}, drain: { skipped: true }, preflight: {} };
  assert.deepEqual(loggedSteps(failover("checkpoint", ran), STEPS), ["plan", "preflight", "fence", "abort"]);
});

test("a pre-flight whose checks all pass is complete before Continue; other steps when stored so", () => {
  const passing = { complete: false, result: { failed: [], unacknowledged: [] } };
  assert.equal(logState(passing, "preflight"), " · complete");
  assert.equal(
    logState({ ...passing, result: { failed: ["acls"], unacknowledged: [] } }, "preflight"),
    " · not complete",
  );
  assert.equal(logState({ complete: false, result: {} }, "apply"), " · not complete");
  assert.equal(logState({ complete: true, result: {} }, "apply"), "");
});

test("the panel, its title and the demo's traffic switch follow the step", () => {
  assert.equal(currentPanel(failover("verify", {}, IDLE, "completed")), "done");
  assert.equal(currentPanel(failover("fence")), "fence");
  assert.deepEqual([panelTitle(STEPS, "checkpoint"), panelTitle(STEPS, "done")], ["Final checkpoint", "Done"]);
  assert.deepEqual(
    ["drain", "fence", "done", "apply", "preflight"].map((step) => showsTraffic(STEPS, step)),
    [true, true, true, false, false],
  );
});
