// /alerts/: the notifications, firing first then resolved, each with its flow (or cluster), value and times.
import { get, poller } from "./api.js";
import { alert, badge, clear, el, table, when } from "./dom.js";

const STATE_BADGE = { firing: "failing", pending: "lagging", resolved: "healthy" };

function row(a) {
  const subject = a.flow_url ? el("a", { href: a.flow_url }, a.name) : a.name;
  return el(
    "tr",
    { "data-alert": a.id, "data-state": a.state },
    el("td", {}, badge(STATE_BADGE[a.state] || "info", a.state)),
    el("td", {}, a.kind),
    el("td", {}, subject),
    el("td", {}, a.message),
    el("td", { class: "nowrap" }, when(a.fired_at || a.started_at)),
    el("td", { class: "nowrap" }, when(a.resolved_at)),
  );
}

const box = document.getElementById("alerts");
poller(
  async () => {
    const alerts = await get("/api/v1/alerts/?limit=200");
    const rows = (alerts.results || alerts).filter((a) => a.state !== "pending");
    clear(
      box,
      table(["State", "Kind", "Flow or cluster", "Message", "Since", "Resolved"], rows.map(row), {
        empty: "No alerts: nothing has fired.",
      }),
    );
    return 5000;
  },
  { onError: (error) => clear(box, alert("error", error.message)) },
).now();
