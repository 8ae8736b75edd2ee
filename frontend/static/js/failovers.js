// /failover/: failovers so far, and step 1 of the wizard (the plan) for operators.
import { get } from "./api.js";
import { submit } from "./forms.js";
import { alert, badge, clear, el, table, when } from "./dom.js";
import { groupPicker } from "./group-picker.js";

function row(f) {
  return el(
    "tr",
    {},
    el("td", {}, el("a", { href: `/failover/${f.id}/` }, `#${f.id}`)),
    el("td", {}, `${f.source} → ${f.target}`),
    el("td", { class: "mono" }, f.groups.join(", ")),
    el("td", {}, f.mode, f.dry_run ? el("span", { class: "faint" }, " · dry run") : null),
    el("td", {}, badge(f.status, f.status === "active" ? `at ${f.step}` : f.status)),
    el("td", { class: "nowrap" }, when(f.created_at)),
  );
}

async function load() {
  const box = document.getElementById("failovers");
  try {
    const failovers = await get("/api/v1/failovers/");
    clear(
      box,
      table(["Failover", "Clusters", "Groups", "Mode", "Status", "Started"], failovers.map(row), {
        empty: "No failovers yet.",
      }),
    );
  } catch (error) {
    clear(box, alert("error", error.message));
  }
}

const form = document.getElementById("plan-form");
if (form) {
  groupPicker(form);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const extra = { mode: form.querySelector("input[name=mode]:checked").value };
    submit(
      form,
      "POST",
      "/api/v1/failovers/",
      (failover) => window.location.assign(`/failover/${failover.id}/`),
      extra,
    );
  });
}
load();
