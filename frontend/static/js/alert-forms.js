// The Notifications page's forms: fields built the way forms.js reads them (data-kind, data-errors-for), the kinds
// from the page (choices.py), and the flows and clusters a rule or a silence may name.
import { get } from "./api.js";
import { el } from "./dom.js";

export const CHOICES = JSON.parse(document.getElementById("alert-choices").textContent);
export const kindLabel = (value) => (CHOICES.kinds.find(([v]) => v === value) || [value, value])[1];

let names = null;
// Flows by id and clusters by id ({flows: Map, clusters: Map}), read once per page.
export async function lookups() {
  if (!names) {
    const [flows, clusters] = await Promise.all([get("/api/v1/flows/"), get("/api/v1/clusters/")]);
    names = {
      flows: new Map((flows.results || flows).map((f) => [f.id, f.name])),
      clusters: new Map((clusters.results || clusters).map((c) => [c.id, c.alias])),
    };
  }
  return names;
}

export function field(label, name, input) {
  input.id = input.id || `${input.form || "f"}-${name}-${Math.random().toString(36).slice(2, 8)}`;
  return el(
    "div",
    { class: "field", "data-field": name },
    el("label", { for: input.id }, label),
    input,
    el("div", { class: "errors", "data-errors-for": name }),
  );
}

export function select(name, options, kind = "choice") {
  return el(
    "select",
    { name, "data-kind": kind },
    options.map(([value, label]) => el("option", { value }, label)),
  );
}

export const input = (name, kind = "text", attrs = {}) =>
  el("input", { name, "data-kind": kind, type: kind === "number" ? "text" : kind, ...attrs });

export function checkbox(name, label) {
  return el(
    "div",
    { class: "field", "data-field": name },
    el("label", {}, el("input", { type: "checkbox", name, "data-kind": "bool", checked: true }), ` ${label}`),
    el("div", { class: "errors", "data-errors-for": name }),
  );
}

export const errorsBox = () => el("div", { class: "alert error", "data-errors-general": true });
