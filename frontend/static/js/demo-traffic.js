// The demo's traffic generator: producing or paused, and a pause/resume button for operators (the failover wizard's
// drain and fence steps ask for the source producers and consumers to stop; pausing stops the generator and the
// consumer group that reads its records). Shown in the dashboard header and in the wizard's drain, fence and done
// panels; hidden when no demo runs.
//
// The generator always runs on one cluster. Once a failover moved its group elsewhere, resuming restarts the
// producers and the group on the old cluster: the control says so (in full in a panel, in short in the dashboard's
// header), the resume button says where it resumes, and a click asks once more with the whole warning (the API
// refuses a resume that does not name the cluster).
import { get, post } from "./api.js";
import { alert, clear, el } from "./dom.js";

const REFRESH_MS = 3000;

function render(box, state, error) {
  box.hidden = !state.running && !error;
  if (box.hidden) return;
  const canOperate = box.dataset.canOperate === "1";
  const group = state.group ? `group ${state.group}` : "";
  const on = state.cluster ? ` on ${state.cluster}` : "";
  const label = state.paused
    ? `paused${group ? ` (producers and ${group} stopped${on})` : ""}`
    : `producing ${state.rate} records/s${on}${group ? `, read by ${group}` : ""}`;
  const pending = state.pending ? el("span", { class: "faint" }, " (switching…)") : null;
  const moved = state.moved;
  const warningText = moved
    ? `${moved.group} was failed over to ${moved.to} (failover ${moved.failover}). Resuming restarts the demo's producers and ${moved.group} on ${state.cluster}, from the offsets ${moved.group} left there, not on ${moved.to} where it reads now.`
    : "";
  let warning = null;
  if (moved && state.paused && box.dataset.layout === "block") {
    warning = alert("warn", warningText);
    warning.classList.add("demo-traffic-moved");
  } else if (moved && state.paused) {
    warning = el(
      "span",
      { class: "demo-traffic-moved short", title: warningText },
      `${moved.group} now reads on ${moved.to}`,
    );
  }
  const resumeLabel = moved ? `Resume on ${state.cluster} anyway` : "Resume traffic";
  const button = canOperate
    ? el(
        "button",
        { class: "btn", type: "button", id: "demo-traffic-toggle", "data-paused": String(state.paused) },
        state.paused ? resumeLabel : "Pause traffic",
      )
    : null;
  button?.addEventListener("click", () => {
    if (state.paused && moved && !window.confirm(`${warningText}\n\nResume on ${state.cluster} anyway?`)) return;
    toggle(box, !state.paused, moved ? state.cluster : "");
  });
  clear(
    box,
    el(
      "span",
      { class: `traffic-state ${state.paused ? "paused" : "producing"}` },
      "Demo traffic: ",
      el("b", {}, label),
      pending,
    ),
    button,
    error ? el("span", { class: "err" }, ` ${error}`) : null,
    warning,
  );
}

async function toggle(box, paused, confirmCluster) {
  try {
    render(box, await post("/api/v1/demo/traffic/", { paused, confirm_cluster: confirmCluster }));
  } catch (error) {
    render(box, error.data && typeof error.data === "object" ? error.data : { running: true }, error.message);
  }
}

async function refresh(box) {
  if (!box.isConnected) return; // a wizard panel that is not on screen now
  try {
    render(box, await get("/api/v1/demo/traffic/"));
  } catch {
    // The page shows API errors already; this control just waits for the next round.
  }
}

// Keeps `box` up to date with the generator's state from now on.
export function mountDemoTraffic(box) {
  refresh(box);
  setInterval(() => refresh(box), REFRESH_MS);
  return box;
}

const header = document.getElementById("demo-traffic");
if (header) mountDemoTraffic(header);
