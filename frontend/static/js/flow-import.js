// /flows/import/: a MirrorMaker 2 properties file in, clusters and flows out (all or nothing).
import { api, ApiError } from "./api.js";
import { showErrors, clearErrors } from "./forms.js";
import { alert, clear, el } from "./dom.js";

const form = document.getElementById("import-form");
const text = document.getElementById("f-properties");
const count = (rows, noun) => `${rows.length} ${noun}${rows.length === 1 ? "" : "s"}`;

document.getElementById("file").addEventListener("change", async (event) => {
  const file = event.target.files[0];
  if (file) text.value = await file.text();
});

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  clearErrors(form);
  const result = document.getElementById("result");
  try {
    const created = await api("POST", "/api/v1/flows/import/", { properties: text.value });
    clear(
      result,
      alert("ok", `Imported ${count(created.clusters, "cluster")} and ${count(created.flows, "flow")}.`),
      el("h3", {}, "Clusters"),
      el(
        "ul",
        { id: "imported-clusters" },
        created.clusters.map((c) => el("li", {}, el("a", { href: `/clusters/${c.id}/` }, c.alias))),
      ),
      el("h3", {}, "Flows"),
      el(
        "ul",
        { id: "imported-flows" },
        created.flows.map((f) => el("li", {}, el("a", { href: `/flows/${f.id}/` }, f.name))),
      ),
    );
  } catch (error) {
    // An import is all or nothing: a refused file must not leave an earlier import's result on show.
    clear(result, alert("error", "Nothing was imported."));
    if (error instanceof ApiError && error.status === 400) showErrors(form, error.data);
    else showErrors(form, { detail: error.message });
  }
});
