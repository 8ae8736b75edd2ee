// Broker health: one cluster's panel (the cluster page) or a line per cluster (the dashboard), from the observer's
// rows (GET /api/v1/clusters/<id>/health/, /api/v1/broker-health/). A figure not observed yet says "no data".

import { get, poller } from "./api.js";
import { clear, el, number, table, when } from "./dom.js";

const REFRESH_MS = 15000;
const NO_DATA = "no data";

const FIGURES = [
  { key: "brokers_up", label: "Brokers up", hint: "brokers in the cluster's metadata" },
  { key: "controller_id", label: "Controller", hint: "the active controller's broker id" },
  { key: "under_replicated", label: "Under-replicated", hint: "partitions with ISR smaller than replicas" },
  { key: "offline", label: "Offline", hint: "partitions without a live leader" },
  { key: "under_min_isr", label: "Under min ISR", hint: "partitions below min.insync.replicas" },
];

function shown(health, key) {
  const value = health[key];
  if (value === null || value === undefined) return NO_DATA;
  if (key === "brokers_up" && health.brokers_known > value)
    return `${number(value)} of ${number(health.brokers_known)}`;
  return number(value);
}

function bad(health, key) {
  if (key === "brokers_up") return (health.brokers_down || 0) > 0;
  if (key === "controller_id") return health.brokers_up !== null && health.controller_id === null;
  return (health[key] || 0) > 0;
}

function sub(health, figure) {
  if (figure.key === "brokers_up" && health.missing_brokers.length) return `down: ${health.missing_brokers.join(", ")}`;
  const examples = (health.examples || {})[figure.key];
  return examples && examples.length ? examples.slice(0, 3).join(", ") : figure.hint;
}

function tile(health, figure) {
  const value = shown(health, figure.key);
  const cls = ["tile", value !== NO_DATA && bad(health, figure.key) ? "bad" : ""].join(" ").trim();
  return el(
    "div",
    { class: cls, "data-figure": figure.key, title: figure.hint },
    el("div", { class: "label" }, figure.label),
    el("div", { class: "value" }, value),
    el("div", { class: "sub" }, sub(health, figure)),
  );
}

function status(health) {
  if (!health.at) return el("p", { class: "muted", "data-reason": "" }, health.reason || NO_DATA);
  const text = `Observed ${when(health.at)}${health.reason ? ` — ${health.reason}` : ""}`;
  return el("p", { class: "muted", "data-reason": "" }, text);
}

function panel(root, id) {
  const body = root.querySelector("[data-broker-health]");
  return async () => {
    const health = await get(`/api/v1/clusters/${id}/health/`);
    clear(
      body,
      el(
        "section",
        { class: "tiles five" },
        FIGURES.map((f) => tile(health, f)),
      ),
      status(health),
    );
    return REFRESH_MS;
  };
}

function line(health) {
  const cells = FIGURES.map((f) => {
    const value = shown(health, f.key);
    const cls = ["num", value !== NO_DATA && bad(health, f.key) ? "bad" : ""].join(" ").trim();
    return el("td", { class: cls, "data-figure": f.key, title: f.hint }, value);
  });
  const note = health.reason || (health.at ? `observed ${when(health.at)}` : NO_DATA);
  return el(
    "tr",
    { "data-cluster": health.alias },
    el("td", {}, el("a", { href: `/clusters/${health.cluster}/` }, health.alias)),
    cells,
    el("td", { class: "muted" }, note),
  );
}

function lines(root) {
  const body = root.querySelector("[data-broker-health]");
  const headers = [{ label: "Cluster" }, ...FIGURES.map((f) => ({ label: f.label, num: true })), { label: "" }];
  return async () => {
    const rows = await get("/api/v1/broker-health/");
    clear(body, table(headers, rows.map(line), { empty: "No clusters yet." }));
    return REFRESH_MS;
  };
}

const root = document.getElementById("broker-health");
if (root) {
  const id = root.dataset.clusterId;
  const tick = id ? panel(root, id) : lines(root);
  const body = root.querySelector("[data-broker-health]");
  poller(tick, {
    onError: (error) => clear(body, el("p", { class: "muted" }, `Broker health not loaded: ${error.message}`)),
  }).now();
}
