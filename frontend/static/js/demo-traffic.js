// The demo's traffic generator in the dashboard header: producing or paused, and a pause/resume button for
// operators (the failover wizard's fence step asks for the source producers and consumers to stop; pausing stops the
// generator and the consumer group that reads its records). Hidden when no demo runs.
import { get, post } from "./api.js";
import { clear, el } from "./dom.js";

const box = document.getElementById("demo-traffic");
const REFRESH_MS = 3000;

function render(state, error) {
  box.hidden = !state.running && !error;
  if (box.hidden) return;
  const canOperate = box.dataset.canOperate === "1";
  const group = state.group ? `group ${state.group}` : "";
  const label = state.paused
    ? `paused${group ? ` (producers and ${group} stopped)` : ""}`
    : `producing ${state.rate} records/s${group ? `, read by ${group}` : ""}`;
  const pending = state.pending ? el("span", { class: "faint" }, " (switching…)") : null;
  const button = canOperate
    ? el(
        "button",
        { class: "btn", type: "button", id: "demo-traffic-toggle", "data-paused": String(state.paused) },
        state.paused ? "Resume traffic" : "Pause traffic",
      )
    : null;
  button?.addEventListener("click", () => toggle(!state.paused));
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
  );
}

async function toggle(paused) {
  try {
    render(await post("/api/v1/demo/traffic/", { paused }));
  } catch (error) {
    render(error.data && typeof error.data === "object" ? error.data : { running: true }, error.message);
  }
}

async function refresh() {
  try {
    render(await get("/api/v1/demo/traffic/"));
  } catch {
    // The dashboard shows API errors already; this control just waits for the next round.
  }
}

refresh();
setInterval(refresh, REFRESH_MS);
