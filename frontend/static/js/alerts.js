// /alerts/: the notifications, firing first then resolved, each with its flow (or cluster), value and times, marked
// silenced or acknowledged; operators acknowledge firing alerts, and create and expire silences.
import { get, poller, post } from "./api.js";
import { alert, badge, canOperate, clear, el, table, when } from "./dom.js";
import { submit } from "./forms.js";
import { CHOICES, errorsBox, field, input, kindLabel, lookups, select } from "./alert-forms.js";

const STATE_BADGE = { firing: "failing", pending: "lagging", resolved: "healthy" };
const DURATIONS = [
  [900, "15 minutes"],
  [3600, "1 hour"],
  [4 * 3600, "4 hours"],
  [86400, "1 day"],
  [7 * 86400, "7 days"],
];

function marks(a) {
  const out = [];
  if (a.silenced_by.length) out.push(badge("info", "silenced"), " ");
  if (a.acknowledged_at) {
    const note = a.acknowledged_note ? `: ${a.acknowledged_note}` : "";
    out.push(el("span", { class: "muted", "data-ack": a.id }, `acknowledged by ${a.acknowledged_by || "?"}${note}`));
  }
  return out;
}

function ackControl(a, refresh) {
  if (!canOperate() || a.state !== "firing" || a.acknowledged_at) return null;
  const note = el("input", { type: "text", placeholder: "note (optional)", "aria-label": "Acknowledgement note" });
  const button = el("button", { class: "btn", type: "submit" }, "Acknowledge");
  return el(
    "form",
    {
      class: "inline ack",
      onsubmit: async (event) => {
        event.preventDefault();
        button.disabled = true;
        try {
          await post(`/api/v1/alerts/${a.id}/acknowledge/`, { note: note.value });
        } catch (error) {
          button.after(el("span", { class: "errors" }, ` ${error.message}`));
        }
        await refresh();
      },
    },
    note,
    " ",
    button,
  );
}

function row(a, refresh) {
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
    el("td", {}, marks(a), ackControl(a, refresh)),
  );
}

const box = document.getElementById("alerts");
const alertsPoll = poller(
  async () => {
    // A note being typed is not wiped by the refresh: the table waits until the field is left.
    const typing = box.querySelector("form.ack input:focus");
    if (typing) return 5000;
    const alerts = await get("/api/v1/alerts/?limit=200");
    const rows = (alerts.results || alerts).filter((a) => a.state !== "pending");
    clear(
      box,
      table(
        ["State", "Kind", "Flow or cluster", "Message", "Since", "Resolved", "Silence or acknowledgement"],
        rows.map((a) => row(a, () => alertsPoll.now())),
        { empty: "No alerts: nothing has fired." },
      ),
    );
    return 5000;
  },
  { onError: (error) => clear(box, alert("error", error.message)) },
);
alertsPoll.now();

// Silences
const silenceList = document.getElementById("silence-list");

function matcher(s, names) {
  const parts = [s.rule ? `rule ${s.rule}` : null, s.kind ? kindLabel(s.kind) : null];
  if (s.flow) parts.push(`flow ${names.flows.get(s.flow) || s.flow}`);
  if (s.cluster) parts.push(`cluster ${names.clusters.get(s.cluster) || s.cluster}`);
  return parts.filter(Boolean).join(", ");
}

async function loadSilences() {
  const [silences, names] = await Promise.all([get("/api/v1/alert-silences/"), lookups()]);
  const rows = (silences.results || silences).map((s) =>
    el(
      "tr",
      { "data-silence": s.id, "data-active": String(s.active) },
      el("td", {}, s.active ? badge("info", "active") : badge("disabled", "expired")),
      el("td", {}, matcher(s, names)),
      el("td", {}, s.reason),
      el("td", {}, s.created_by || "–"),
      el("td", { class: "nowrap" }, when(s.ends_at)),
      el(
        "td",
        {},
        s.active && canOperate()
          ? el(
              "button",
              {
                class: "btn",
                type: "button",
                onclick: async () => {
                  await post(`/api/v1/alert-silences/${s.id}/expire/`);
                  await Promise.all([loadSilences(), alertsPoll.now()]);
                },
              },
              "Expire",
            )
          : null,
      ),
    ),
  );
  clear(silenceList, table(["State", "Matches", "Reason", "By", "Ends", ""], rows, { empty: "No silences." }));
}

async function silenceForm(form) {
  const [names, rules] = await Promise.all([lookups(), get("/api/v1/alert-rules/")]);
  const none = [["", "any"]];
  const ruleOptions = (rules.results || rules).map((r) => [
    r.id,
    `${kindLabel(r.kind)} (${r.flow ? names.flows.get(r.flow) || `flow ${r.flow}` : "default"})`,
  ]);
  clear(
    form,
    el("h3", {}, "New silence"),
    errorsBox(),
    el(
      "div",
      { class: "grid2" },
      field("Kind", "kind", select("kind", [["", "any (give a rule)"], ...CHOICES.kinds])),
      field("Rule", "rule", select("rule", [["", "any (give a kind)"], ...ruleOptions], "number")),
      field("Flow", "flow", select("flow", [...none, ...names.flows], "number")),
      field("Cluster", "cluster", select("cluster", [...none, ...names.clusters], "number")),
      field("For", "duration_seconds", select("duration_seconds", DURATIONS, "number")),
      field("Reason", "reason", input("reason")),
    ),
    el("button", { class: "btn primary", type: "submit" }, "Create silence"),
  );
  form.elements.duration_seconds.value = "3600";
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    submit(form, "POST", "/api/v1/alert-silences/", async () => {
      form.elements.reason.value = "";
      await Promise.all([loadSilences(), alertsPoll.now()]);
    });
  });
}

loadSilences().catch((error) => clear(silenceList, alert("error", error.message)));
const silenceFormNode = document.getElementById("silence-form");
if (silenceFormNode)
  silenceForm(silenceFormNode).catch((error) => clear(silenceFormNode, alert("error", error.message)));
